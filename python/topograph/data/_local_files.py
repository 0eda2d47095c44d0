"""The properties DGL's built-in datasets have, for the ones topograph reads from a local file (the citation
graphs, SST): where the file was found, no URL (nothing is downloaded) and the verbose flag. A class using it sets
_raw_dir, _raw_path and _verbose."""
from __future__ import annotations


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
