"""prixfixe-health: machine health steps for prixfixe routines.

Three step types, each with a versioned data schema and a `status` an agent can read the same
way in all of them (`ok`, `warn`, `critical`; `gpu-check` adds `absent`):

- `disk-check` (`prixfixe_health.disk`): used and free space of configured paths, through
  the file gate, with the growth since the last reading (kept in the plugin's own table);
- `service-check` (`prixfixe_health.service`): HTTP(S) and TCP probes through the network
  gate, and `systemctl is-active UNIT` through the exec gate;
- `gpu-check` (`prixfixe_health.gpu`): `nvidia-smi`'s CSV query through the exec gate; no
  `nvidia-smi` is a clean `absent`, not a failure.

The entry point (`prixfixe = health`) names `prixfixe_health.plugin`, which registers them.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("prixfixe-health")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
