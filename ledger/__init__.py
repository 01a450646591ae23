"""The ground floor's record schema: ledgers of JSON-lines records, written by every check and read by `reports`.

`ledger.records` holds the schema, the writer and the reader; this package imports nothing of the project.
"""

from delta_suite.ledger.records import SCHEMA, append_records, make_record, read_ledgers, suite_version

__all__ = ["SCHEMA", "append_records", "make_record", "read_ledgers", "suite_version"]
