"""The English vocabulary the analyser knows: stop words and near-synonyms.

Both tables are general on purpose: they hold the phrasing of requests and the words software
tools use for the same operation or thing, never the subject matter of a benchmark catalogue.
"""

from __future__ import annotations

__all__ = ["FILE_EXTENSIONS", "STOP_WORDS", "SYNONYM_GROUPS"]

#: Common English function words plus the phrasing of a request ("could you please help me
#: find ..."): they occur in nearly every query and say nothing about which tool fits.
_STOP_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves s t d ll m re ve
    can could may might must shall also etc e g ie eg im ive id dont cant wont whats thats
    please help hi hey hello thanks thank want wants wanted need needs like love wish
    tell show give let know assist assistance looking interested provide kindly able
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())

#: Near-synonyms in tool descriptions and requests, one group per line. General vocabulary of
#: software tools (operations, then the things they act on); kept small on purpose, since
#: every group also adds noise.
SYNONYM_GROUPS: tuple[str, ...] = (
    # operations
    "create make generate build produce compose draft",
    "add insert append attach",
    "delete remove erase discard purge",
    "edit modify update change alter revise amend",
    "find search seek lookup locate discover query explore browse",
    "get fetch retrieve obtain download pull load",
    "read open view display inspect",
    "write save store record persist put",
    "send post publish share submit upload",
    "list enumerate catalog catalogue",
    "convert transform conversion export",
    "summarize summarise summary digest overview recap condense",
    "analyze analyse analysis analytics examine evaluate assess audit",
    "compare comparison versus contrast",
    "recommend recommendation suggest suggestion advice advise",
    "calculate compute calculator math arithmetic",
    "schedule reserve reservation appointment booking",
    "remind reminder alert notify notification remember",
    "remember memory memorize recall",
    "monitor track watch",
    "check verify validate",
    "run execute launch invoke",
    "stop cancel halt terminate",
    "translate translation translator",
    "chat talk converse conversation",
    "plan planner itinerary organize",
    # things
    "image picture photo photograph pic img",
    "video movie film clip footage",
    "music song audio track sound",
    "document doc file pdf",
    "webpage website site page url link web internet online",
    "code programming software developer repository repo github script",
    "chart graph plot visualize visualization diagram",
    "calendar date",
    "time clock timezone",
    "note memo notebook",
    "task todo",
    "email mail inbox",
    "error bug issue problem",
    "database sql",
    "folder directory",
)


#: File name extensions a request may carry ("open notes.txt"), each with the kind of file it
#: says ("" for none beyond "file"): see ``analysis.request_text``.
_EXTENSIONS = {
    "": "txt md markdown rst pdf csv tsv json jsonl yaml yml toml ini cfg conf env log xml html "
    "htm py js ts tsx jsx rb go rs java c h cpp hpp cs php sh bash sql db sqlite lock doc docx "
    "odt xls xlsx ods ppt pptx odp rtf tex ipynb",
    "image": "png jpg jpeg gif svg webp bmp tif tiff ico heic",
    "audio": "mp3 wav ogg flac m4a aac",
    "video": "mp4 mov avi mkv webm",
    "archive": "zip gz tgz tar bz2 xz 7z rar",
}
FILE_EXTENSIONS: dict[str, str] = {
    ext: kind for kind, text in _EXTENSIONS.items() for ext in text.split()
}
