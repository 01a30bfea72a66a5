"""The resource service: listing, templates, reading, completion and change notifications.

Declarations (`Resource`, `ResourceTemplate`) live in `prixfixe.declarations.resource`;
this package serves them. `service.py` answers requests, `paging.py` makes and checks list cursors,
`notify.py` tells subscribed sessions what changed, in both protocol revisions.
"""
