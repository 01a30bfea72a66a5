"""Curation: raw objects and schemas made into what a model reads (see `curator.py`)."""

from prixfixe.curation.curator import (
    CURATION_VERSION,
    Curated,
    CuratedEntry,
    CuratedView,
    Curator,
    curator_for,
)
from prixfixe.curation.fields import CuratedField, schema_fields, value_text
from prixfixe.curation.flatten import flatten_data
from prixfixe.declarations.curation import MISSING, Candidate, CurationRule, PropertyInfo

__all__ = [
    "CURATION_VERSION",
    "MISSING",
    "Candidate",
    "Curated",
    "CuratedEntry",
    "CuratedField",
    "CuratedView",
    "CurationRule",
    "Curator",
    "PropertyInfo",
    "curator_for",
    "flatten_data",
    "schema_fields",
    "value_text",
]
