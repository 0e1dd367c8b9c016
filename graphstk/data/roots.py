"""The data root (``root`` > ``$GRAPHSTK_DATA`` > ``./datasets``) and the offline switches
``GRAPHSTK_OFFLINE`` and ``GRAPHSTK_DOWNLOAD_TIMEOUT`` (seconds, default 10).
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["resolve_data_root", "root_origin", "data_root_and_origin", "offline", "download_timeout",
           "ENV_DATA_ROOT", "ENV_OFFLINE", "ENV_DOWNLOAD_TIMEOUT", "DEFAULT_DATA_ROOT"]

ENV_DATA_ROOT = "GRAPHSTK_DATA"
ENV_OFFLINE = "GRAPHSTK_OFFLINE"
ENV_DOWNLOAD_TIMEOUT = "GRAPHSTK_DOWNLOAD_TIMEOUT"
DEFAULT_DATA_ROOT = "datasets"
_DEFAULT_TIMEOUT_S = 10.0


# --------------------------------------------------------------------------- data root
def resolve_data_root(root: str | os.PathLike | None = None) -> Path:
    """Return the data root: ``root`` if given, else ``$GRAPHSTK_DATA``, else ``./datasets``.

    The path is expanded (``~``) and made absolute; it does not need to exist yet
    (PyG creates it when it downloads). The command line passes ``--data-root`` as ``root``.
    """
    return data_root_and_origin(root)[0]


def data_root_and_origin(root) -> tuple[Path, str]:
    """``(path, where it came from)``: :func:`resolve_data_root` and :func:`root_origin` in one call.

    A ``root`` equal to ``$GRAPHSTK_DATA`` or to the default
    (as the command line passes it on) is reported as coming from there."""
    env = os.environ.get(ENV_DATA_ROOT)
    env_path = Path(env).expanduser().absolute() if env else None
    default_path = Path(DEFAULT_DATA_ROOT).absolute()
    if root is not None and str(root) != "":
        path = Path(root).expanduser().absolute()
        if env_path is not None and path == env_path:
            where = f"${ENV_DATA_ROOT}"
        elif env_path is None and path == default_path:
            where = f"the default ./{DEFAULT_DATA_ROOT} (no --data-root, ${ENV_DATA_ROOT} unset)"
        else:
            where = "the root argument (--data-root on the command line)"
        return path, where
    if env_path is not None:
        return env_path, f"${ENV_DATA_ROOT}"
    return default_path, f"the default ./{DEFAULT_DATA_ROOT} (no --data-root, ${ENV_DATA_ROOT} unset)"


def offline() -> bool:
    """``True`` when ``$GRAPHSTK_OFFLINE`` forbids downloads (``1``, ``true``, ``yes`` or ``on``)."""
    return os.environ.get(ENV_OFFLINE, "").strip().lower() in {"1", "true", "yes", "on"}


def download_timeout() -> float:
    """Seconds that bound the reachability probe and a download: ``$GRAPHSTK_DOWNLOAD_TIMEOUT``, default 10."""
    raw = os.environ.get(ENV_DOWNLOAD_TIMEOUT)
    try:
        return float(raw) if raw else _DEFAULT_TIMEOUT_S
    except ValueError:
        raise ValueError(f"${ENV_DOWNLOAD_TIMEOUT} must be a number of seconds, got {raw!r}") from None


def root_origin(root) -> str:
    """Where :func:`resolve_data_root` takes the root from, for error messages."""
    return data_root_and_origin(root)[1]
