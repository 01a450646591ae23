"""Generated Table 3 reports from recorded ledgers."""
