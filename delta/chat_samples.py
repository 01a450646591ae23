"""A small built-in sample of multi-turn chats in several languages, used until the corpora issue provides real ones.

Each transcript is a list of {"role", "content"} messages that alternate user and assistant after an optional
system message. The first message is long (a document, a log, a code file) so that later turns are appends to a
text longer than the repair's first window; contents include code, CJK, Hangul, Cyrillic, accents, digits and
whitespace runs at the ends of turns.
"""

from __future__ import annotations

Message = dict[str, str]

_REPORT_EN = (
    "Quarterly operations review, third quarter.\n\n"
    "Summary: throughput on the Rotterdam line rose 4.2% to 18,340 units per week, while scrap fell from 3.1% to "
    "2.6% after the die change in August. Two unplanned stops (14 and 22 September) cost 9.5 hours in total; both "
    "traced to the same hydraulic coupling, which has since been replaced with the revised part (rev. C).\n\n"
    "Staffing: the night shift is still two technicians short. Overtime averaged 6.8 hours per person per week, "
    "which is above the 5-hour target we agreed in June. We recommend approving the two open requisitions before "
    "the holiday peak, otherwise the overtime trend will continue into the fourth quarter.\n\n"
    "Energy: consumption per unit dropped to 1.92 kWh (from 2.05 kWh), mostly because the compressors now idle "
    "down between batches. The remaining gap to the 1.80 kWh target is in the curing ovens, which run at full "
    "temperature during changeovers.\n\n"
    "Open questions for the steering group:\n"
    "  1. Should the oven retrofit be pulled forward from Q2 to Q1?\n"
    "  2. Do we keep the rev. B couplings as spares, or scrap them?\n"
    "  3. Who owns the supplier audit for the new resin?\n"
)

_CODE_PY = (
    "import csv\nfrom collections import defaultdict\n\n\n"
    "def load_orders(path):\n"
    "    \"\"\"Read orders.csv and group the amounts by customer.\"\"\"\n"
    "    totals = defaultdict(float)\n"
    "    with open(path, newline=\"\", encoding=\"utf-8\") as handle:\n"
    "        for row in csv.DictReader(handle):\n"
    "            if row[\"status\"] != \"cancelled\":\n"
    "                totals[row[\"customer_id\"]] += float(row[\"amount\"])\n"
    "    return dict(totals)\n\n\n"
    "def top_customers(totals, n=10):\n"
    "    return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:n]\n\n\n"
    "if __name__ == \"__main__\":\n"
    "    for customer, amount in top_customers(load_orders(\"orders.csv\")):\n"
    "        print(f\"{customer:>8}  {amount:12,.2f}\")\n"
)

_ZH = (
    "请帮我总结下面这份会议纪要，并列出需要跟进的事项。\n\n"
    "会议时间：2024年3月18日下午两点。参会人员：产品部王磊、研发部李静、测试部陈晨、运营部赵敏。\n"
    "一、新版本发布计划：研发部表示核心功能已经完成，但支付模块的回归测试还没有通过，预计需要再延后一周。"
    "产品部同意延期，但要求在4月1日之前必须上线，否则会影响春季促销活动。\n"
    "二、用户反馈：运营部收集到的主要问题包括登录速度慢、消息推送不及时、部分安卓机型闪退。"
    "测试部已经复现了其中两个问题，闪退问题集中在系统版本较旧的设备上。\n"
    "三、下一步安排：研发部负责修复闪退问题，测试部补充自动化测试用例，运营部准备活动文案和客服话术。"
    "下次会议定于3月25日同一时间召开。\n"
)

_KO_RU_FR = (
    "다음 세 가지 메모를 하나의 영어 이메일로 정리해 주세요.\n\n"
    "1) 서울 사무소 이전은 다음 달 15일로 확정되었습니다. 새 주소는 강남구 테헤란로 123, 10층입니다.\n"
    "2) Московский филиал просит перенести видеоконференцию с четверга на пятницу, 11:30 по местному времени, "
    "потому что в четверг у них аудит.\n"
    "3) L'équipe de Lyon a terminé la migration des serveurs ; il reste à vérifier les sauvegardes et à mettre "
    "à jour la documentation interne avant la fin du mois.\n\n"
    "메일은 정중하지만 간결하게 써 주시고, 마지막에 질문이 있으면 연락 달라는 문장을 넣어 주세요.\n"
)

_DE_LOG = (
    "Ich bekomme beim Start des Dienstes diese Meldungen. Was ist da los?\n\n"
    "2024-05-02 08:14:03,117 INFO  [main] Starte Konfiguration aus /etc/lager/dienst.yaml\n"
    "2024-05-02 08:14:03,402 WARN  [db-pool] Verbindung 3/10 abgelehnt: Zeitüberschreitung nach 5000 ms\n"
    "2024-05-02 08:14:08,410 WARN  [db-pool] Verbindung 3/10 abgelehnt: Zeitüberschreitung nach 5000 ms\n"
    "2024-05-02 08:14:13,415 ERROR [db-pool] Maximale Anzahl Wiederholungen (2) erreicht, gebe auf\n"
    "2024-05-02 08:14:13,416 ERROR [main] Dienst konnte nicht gestartet werden: DataSourceException\n"
    "    at lager.db.Pool.acquire(Pool.java:211)\n"
    "    at lager.Dienst.start(Dienst.java:58)\n"
    "    at lager.Main.main(Main.java:17)\n\n"
    "Die Datenbank läuft laut `systemctl status postgresql` aber ganz normal.   \n"
)

CHATS: dict[str, list[Message]] = {
    "en_report": [
        {"role": "system", "content": "You are a concise assistant for an operations team."},
        {"role": "user", "content": _REPORT_EN + "\nCan you turn this into five bullet points for the board?"},
        {"role": "assistant", "content": "- Throughput +4.2% (18,340 units/week); scrap down to 2.6%.\n"
         "- Two stops (9.5 h) from one coupling, now replaced with rev. C.\n"
         "- Night shift two technicians short; overtime 6.8 h/week vs 5 h target.\n"
         "- Energy 1.92 kWh/unit; ovens are the remaining gap to 1.80.\n"
         "- Decisions needed: oven retrofit timing, rev. B spares, resin audit owner."},
        {"role": "user", "content": "Good. Now draft the recommendation on the requisitions, two sentences max.\n   "},
        {"role": "assistant", "content": "\n   We recommend approving both night-shift requisitions now, so that new "
         "technicians are trained before the holiday peak. Without them, overtime will stay above target."},
        {"role": "user", "content": "Thanks! One more: what's 18,340 × 13 weeks?"},
        {"role": "assistant", "content": "18,340 × 13 = 238,420 units for the quarter."},
    ],
    "code_review": [
        {"role": "user", "content": "Review this script, please:\n\n```python\n" + _CODE_PY + "```\n"},
        {"role": "assistant", "content": "Three things stand out:\n\n1. `float(row[\"amount\"])` will raise on empty "
         "cells; skip or default them.\n2. `top_customers` sorts everything just to take ten; `heapq.nlargest` is "
         "O(n log k).\n3. The status check is case-sensitive, so `Cancelled` slips through.\n"},
        {"role": "user", "content": "Show me the fixed `load_orders` only.\n\n    "},
        {"role": "assistant", "content": "\n    ```python\ndef load_orders(path):\n    totals = defaultdict(float)\n"
         "    with open(path, newline=\"\", encoding=\"utf-8\") as handle:\n"
         "        for row in csv.DictReader(handle):\n"
         "            if row[\"status\"].strip().lower() == \"cancelled\":\n                continue\n"
         "            amount = (row.get(\"amount\") or \"\").strip()\n"
         "            if amount:\n                totals[row[\"customer_id\"]] += float(amount)\n"
         "    return dict(totals)\n```"},
        {"role": "user", "content": "Why `newline=\"\"`?"},
        {"role": "assistant", "content": "The csv module handles line endings itself; `newline=\"\"` stops Python "
         "from translating \\r\\n first, which would otherwise break quoted fields that contain newlines."},
    ],
    "zh_minutes": [
        {"role": "user", "content": _ZH},
        {"role": "assistant", "content": "会议纪要总结：\n"
         "1. 新版本因支付模块回归测试未通过，预计延后一周，但须在4月1日前上线。\n"
         "2. 用户反馈集中在登录慢、推送延迟和旧版安卓闪退。\n3. 下次会议：3月25日14:00。\n\n跟进事项：\n"
         "- 研发部：修复闪退问题\n- 测试部：补充自动化测试用例\n- 运营部：准备活动文案和客服话术"},
        {"role": "user", "content": "很好。请再用一句话说明延期的风险。"},
        {"role": "assistant", "content": "如果4月1日前不能上线，"
         "春季促销活动将无法使用新版本的功能，可能影响活动效果。"},
    ],
    "multilingual_email": [
        {"role": "system", "content": "You write polite business email in English."},
        {"role": "user", "content": _KO_RU_FR},
        {"role": "assistant", "content": "Subject: Office move, meeting change and server migration\n\n"
         "Dear colleagues,\n\nThe Seoul office will move on the 15th of next month to 10F, 123 Teheran-ro, "
         "Gangnam-gu. The Moscow branch has asked to move Thursday's video call to Friday at 11:30 local time "
         "because of an audit. The Lyon team has finished the server migration; backups and internal "
         "documentation will be checked before the end of the month.\n\nIf you have any questions, please let me "
         "know.\n\nBest regards"},
        {"role": "user", "content": "Можно добавить дату переноса звонка? Пятница, 14 июня."},
        {"role": "assistant", "content": "Of course: \"...to Friday, 14 June, at 11:30 local time...\"."},
    ],
    "de_log": [
        {"role": "user", "content": _DE_LOG},
        {"role": "assistant", "content": "Der Dienst erreicht die Datenbank nicht innerhalb von 5 Sekunden. "
         "Prüfen Sie `host` und `port` in /etc/lager/dienst.yaml, ob PostgreSQL auf der richtigen Schnittstelle "
         "lauscht (`listen_addresses`), und ob eine Firewall Port 5432 blockiert.\n\n"},
        {"role": "user", "content": "\n\nlisten_addresses steht auf 'localhost', der Dienst läuft in Docker.\n"},
        {"role": "assistant", "content": "Dann ist das die Ursache: aus dem Container ist `localhost` der Container "
         "selbst. Setzen Sie `listen_addresses = '*'` (und passen Sie pg_hba.conf an) oder verwenden Sie "
         "`host.docker.internal` als Host."},
    ],
}

# Raw-text sessions (no template): each turn is appended to the previous text as it is, as in the paper's
# fastokens replay. The second turn starts with a newline and spaces after a turn ending in a newline and spaces.
RAW_SESSIONS: dict[str, list[str]] = {
    "fastokens_whitespace": [
        _CODE_PY + "\nclass Session:\n    def __init__(self):\n        self.prev_host_state = None\n"
        "        return\n\n    def step(self):\n        state = self.prev_host_state\n      ",
        "\n              if state is None:\n                  return 0\n              return state.step()\n      ",
        "\n\n      # trailing comment\n   ",
        "   \n\t\n  done = True\n",
    ],
    "report_turns": [_REPORT_EN, "\n  Follow-up:   ", "\n   4. Is 1.80 kWh realistic?\n", "  \n"],
}
