"""What the datasets topograph reads from local files (the citation graphs, SST) share: where the data folder is
(data_folder: raw_dir, else $TOPOGRAPH_DATA_DIR/<its subfolder>; nothing is downloaded), and the properties DGL's
built-in datasets have (LocalFileProperties: a class using it sets _raw_dir, _raw_path and _verbose)."""
from __future__ import annotations

import os
from typing import Tuple

from .._base import DGLError

ENV_VAR = "TOPOGRAPH_DATA_DIR"


def data_folder(cls_name: str, raw_dir, subfolder: str, holding: str) -> Tuple[str, str]:
    """(folder, where it came from): raw_dir, else $TOPOGRAPH_DATA_DIR/subfolder; with neither, a DGLError saying
    both ways (`holding`: what the folder should hold, for the message)."""
    if raw_dir is not None:
        return os.fspath(raw_dir), f"raw_dir={os.fspath(raw_dir)!r}"
    if os.environ.get(ENV_VAR):
        return os.path.join(os.environ[ENV_VAR], *subfolder.split("/")), f"{ENV_VAR}={os.environ[ENV_VAR]!r}"
    raise DGLError(f"{cls_name}: no data folder: pass raw_dir=<a folder holding {holding}> or set {ENV_VAR}=<a folder "
                   f"holding {subfolder}/ with them> (e.g. ../shared/data); topograph downloads nothing")


class LocalFileProperties:
    @property
    def raw_dir(self) -> str:
        """The folder the data was read from."""
        return self._raw_dir

    @property
    def raw_path(self) -> str:
        """The file read (DGL's is a folder of the raw files)."""
        return self._raw_path

    @property
    def url(self):
        return None  # nothing is downloaded

    @property
    def verbose(self) -> bool:
        return self._verbose
