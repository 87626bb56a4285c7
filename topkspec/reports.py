"""Kept for imports written before the report package: see topkspec.report."""
from topkspec.report import relation_of, side_by_side, slug, write_report, write_reports  # noqa: F401
