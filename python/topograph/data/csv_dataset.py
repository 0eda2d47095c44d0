"""dgl.data.CSVDataset (DGL 2.1's behaviour): a dataset described by a folder holding meta.yaml and the node,
edge and (optionally) graph CSV files it names. Each node file gives the nodes of one node type (ids in the
node id column, optionally a graph id column, the rest features), each edge file the edges of one edge type,
the graph file one row per graph (labels or features). Nodes are numbered in the sorted order of their ids,
per graph and node type, as DGL's; edges keep their file order.

PyYAML and pandas are needed, as DGL's (pydantic, which DGL also needs, is not: meta.yaml is checked here).
Unlike DGL's asserts and KeyErrors, bad input is a DGLError naming the file and what is wrong.

Where DGL 2.1 fails and this does not: a CSV file with a single row (DGL squeezes each column to a 0-d array
and then takes its len()); a graph of a multi-graph dataset with nodes but no edges (DGL raises KeyError).
The cache is save_path/<name>_topograph_<hash>.bin, the hash over meta.yaml's text and the size and time of
each CSV file: DGL's <name>.bin, in the same folder, is kept apart (neither library reads the other's graph
files) and a changed CSV file is parsed again rather than the stale cache read (the stale file is then
deleted). A change of parser is not seen: force_reload=True then, as with DGL."""
from __future__ import annotations

import ast
import importlib
import os
import warnings
from collections import Counter
from types import SimpleNamespace

import numpy as np
import torch

from .._base import DGLError
from .._construct import heterograph
from .._serialize import load_graphs, save_graphs
from .dgl_dataset import DGLDataset, Subset

__all__ = ["CSVDataset", "DefaultDataParser", "load_yaml_with_sanity_check"]

_HOMO_ETYPE = ("_V", "_E", "_V")
# the fields of each meta.yaml entry with their defaults (None: required), as DGL's MetaNode / MetaEdge / MetaGraph
_NODE_FIELDS = {"file_name": None, "ntype": "_V", "graph_id_field": "graph_id", "node_id_field": "node_id"}
_EDGE_FIELDS = {"file_name": None, "etype": list(_HOMO_ETYPE), "graph_id_field": "graph_id",
                "src_id_field": "src_id", "dst_id_field": "dst_id"}
_GRAPH_FIELDS = {"file_name": None, "graph_id_field": "graph_id"}


def _import(module: str, package: str):
    """PyYAML and pandas are optional for topograph as a whole: only CSVDataset needs them."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"CSVDataset needs the package '{package}' (pip install {package}): {e}") from None


def _entry(raw, fields: dict, where: str, path: str) -> SimpleNamespace:
    """One node_data / edge_data / graph_data entry of meta.yaml, its omitted (or null) fields at their defaults."""
    if not isinstance(raw, dict):
        raise DGLError(f"CSVDataset: {path}: {where} must be a mapping of fields, got {raw!r}")
    out = {}
    for key, default in fields.items():
        value = raw.get(key)
        if value is None:
            if default is None:
                raise DGLError(f"CSVDataset: {path}: {where} lacks the required field '{key}'")
            value = default
        if key == "etype":
            if not (isinstance(value, list) and len(value) == 3 and all(isinstance(t, str) for t in value)):
                raise DGLError(f"CSVDataset: {path}: {where}'s etype must be a list of three names "
                               f"[src type, edge type, dst type], got {value!r}")
        elif not isinstance(value, str):
            raise DGLError(f"CSVDataset: {path}: {where}'s {key} must be a string, got {value!r}")
        out[key] = value
    return SimpleNamespace(**out)


def load_yaml_with_sanity_check(yaml_file: str) -> SimpleNamespace:
    """meta.yaml as an object with DGL's MetaYaml attributes (version, dataset_name, separator, node_data,
    edge_data, graph_data), checked: required fields present, version 1.0.0, node and edge types unique, and
    every node type an edge type names declared in node_data."""
    yaml = _import("yaml", "pyyaml")
    try:
        with open(yaml_file) as f:
            raw = yaml.safe_load(f)
    except OSError as e:
        raise DGLError(f"CSVDataset: cannot read {yaml_file}: {e}") from None
    except yaml.YAMLError as e:
        raise DGLError(f"CSVDataset: {yaml_file} is not valid YAML: {e}") from None
    if not isinstance(raw, dict):
        raise DGLError(f"CSVDataset: {yaml_file} must be a mapping of fields (dataset_name, node_data, edge_data, "
                       f"...), got {raw!r}")
    for key in ("dataset_name", "node_data", "edge_data"):
        if raw.get(key) is None:
            raise DGLError(f"CSVDataset: {yaml_file} lacks the required field '{key}'")
    meta = SimpleNamespace(version=raw.get("version", "1.0.0"), dataset_name=raw["dataset_name"],
                           separator=raw.get("separator", ","))
    for key in ("version", "dataset_name", "separator"):
        if not isinstance(getattr(meta, key), str) or not getattr(meta, key):
            raise DGLError(f"CSVDataset: {yaml_file}: {key} must be a non-empty string, got {getattr(meta, key)!r}")
    if meta.version != "1.0.0":
        raise DGLError(f"CSVDataset: {yaml_file}: version {meta.version!r} is not supported (only '1.0.0')")
    if meta.dataset_name in (".", "..") or "/" in meta.dataset_name or os.sep in meta.dataset_name:
        raise DGLError(f"CSVDataset: {yaml_file}: dataset_name {meta.dataset_name!r} names the cache's folder: "
                       f"it cannot be '.', '..' or hold a path separator")
    for key in ("node_data", "edge_data"):
        if not isinstance(raw[key], list):
            raise DGLError(f"CSVDataset: {yaml_file}: {key} must be a list of entries, got {raw[key]!r}")
    meta.node_data = [_entry(e, _NODE_FIELDS, f"node_data[{i}]", yaml_file) for i, e in enumerate(raw["node_data"])]
    meta.edge_data = [_entry(e, _EDGE_FIELDS, f"edge_data[{i}]", yaml_file) for i, e in enumerate(raw["edge_data"])]
    graph_raw = raw.get("graph_data")
    meta.graph_data = None if graph_raw is None else _entry(graph_raw, _GRAPH_FIELDS, "graph_data", yaml_file)
    ntypes = [m.ntype for m in meta.node_data]
    etypes = [tuple(m.etype) for m in meta.edge_data]
    for kind, types in (("node", ntypes), ("edge", etypes)):
        repeated = sorted({t for t in types if types.count(t) > 1})
        if repeated:
            raise DGLError(f"CSVDataset: {yaml_file}: each {kind} file needs its own {kind} type, but {repeated} "
                           f"are named by several")
    for m in meta.edge_data:
        for end in (m.etype[0], m.etype[2]):
            if end not in ntypes:
                raise DGLError(f"CSVDataset: {yaml_file}: edge file {m.file_name} has edge type {tuple(m.etype)}, "
                               f"whose node type '{end}' no node file declares (node types: {ntypes})")
    return meta


class DefaultDataParser:
    """What CSVDataset makes of the columns a node / edge / graph file has besides its id columns: one array of
    len(df) rows per column, keyed by header. A column pandas left unnamed ("Unnamed: i") is skipped with a
    warning. A column of text cells is read cell by cell as Python literals, so "0.5,1.0" becomes a row of a
    2-D array (shape (rows, 2)): float64 there turns float32 later, as DGL's, and integers stay int64. Cells
    that are not numbers, or rows of unequal length, are a DGLError naming the column and row."""

    def __call__(self, df) -> dict:
        data = {}
        for header in df.columns:
            if isinstance(header, str) and header.startswith("Unnamed: "):
                warnings.warn(f"CSVDataset: column {header!r} has no header and is ignored", stacklevel=2)
                continue
            column = df[header].to_numpy()
            if column.dtype == object:
                column = self._parse_cells(column, header)
            data[header] = column
        return data

    @staticmethod
    def _parse_cells(column: np.ndarray, header) -> np.ndarray:
        values = []
        for row, cell in enumerate(column):
            try:
                if not isinstance(cell, str):
                    raise ValueError
                values.append(ast.literal_eval(cell.strip()))
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise DGLError(f"column {header!r}, row {row}: {cell!r} is not a number or a comma-separated list "
                               f"of numbers") from None
        shapes = []
        for row, value in enumerate(values):
            try:
                shapes.append(np.shape(value))
            except ValueError:  # numpy refuses a nested list whose inner lists differ in length
                raise DGLError(f"column {header!r}, row {row}: {column[row]!r} is a nested list of uneven "
                               f"length") from None
            if shapes[row] != shapes[0]:
                raise DGLError(f"column {header!r}: row 0 holds {_count(shapes[0])} but row {row} holds "
                               f"{_count(shapes[row])}: every row needs the same number")
        array = np.array(values)
        if array.dtype.kind not in "biuf":
            raise DGLError(f"column {header!r}: cells hold {array.dtype} values, not numbers (first: {column[0]!r})")
        return array


def _count(shape: tuple) -> str:
    return "one number" if shape == () else f"{shape[0]} numbers" if len(shape) == 1 else f"an array {shape}"


def _tensor(value, rows: int, key, path: str) -> torch.Tensor:
    """A parsed column as a tensor of `rows` rows; float64 made float32 (DGL's default float type)."""
    if not isinstance(value, torch.Tensor):
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise DGLError(f"CSVDataset: {path}: data '{key}' holds {array.dtype} values: a tensor needs numbers")
        value = torch.as_tensor(array)
    if value.dim() == 0 or value.shape[0] != rows:
        raise DGLError(f"CSVDataset: {path}: data '{key}' has {value.shape[0] if value.dim() else 0} rows but the "
                       f"file has {rows}: every column needs one value per row")
    return value.float() if value.dtype == torch.float64 else value


class _Table:
    """One CSV file read: its id columns (1-D numpy arrays) and its parsed data as tensors, rows in file order."""

    def __init__(self, pd, base_dir: str, meta: SimpleNamespace, separator: str, parser, id_fields, role: str):
        self.path = os.path.join(base_dir, meta.file_name)
        if not os.path.isfile(self.path):
            raise DGLError(f"CSVDataset: {self.path} ({role} named in meta.yaml) does not exist")
        try:
            df = pd.read_csv(self.path, sep=separator)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
            raise DGLError(f"CSVDataset: {self.path} is not a CSV file with separator {separator!r}: {e}") from None
        self.rows = len(df)
        self.ids = {}
        for field, required in id_fields:
            if field not in df.columns:
                if required:
                    raise DGLError(f"CSVDataset: {self.path} has no column '{field}' (columns: {list(df.columns)})")
                continue
            column = df.pop(field)
            if column.isna().any():
                raise DGLError(f"CSVDataset: {self.path}: column '{field}' has empty cells (row "
                               f"{int(np.flatnonzero(column.isna().to_numpy())[0])})")
            self.ids[field] = column.to_numpy()
        try:
            parsed = parser(df)
        except DGLError as e:
            raise DGLError(f"CSVDataset: {self.path}: {e}") from None
        if not isinstance(parsed, dict):
            raise DGLError(f"CSVDataset: {self.path}: the data parser must return a dict {{name: array}}, got "
                           f"{type(parsed).__name__}")
        self.data = {k: _tensor(v, self.rows, k, self.path) for k, v in parsed.items()}

    def graph_ids(self, field: str) -> np.ndarray:
        """The graph id of each row: all 0 (one graph) when the file has no graph id column, as DGL's."""
        return self.ids[field] if field in self.ids else np.zeros(self.rows, dtype=np.int64)


def _unique(values: np.ndarray, what: str, path: str, **kwargs):
    try:
        return np.unique(values, **kwargs)
    except TypeError:
        raise DGLError(f"CSVDataset: {path}: {what} mix numbers and text") from None


def _groups(t: _Table, field: str):
    """(graph id, the rows of that graph in file order) for each graph id of the file, in sorted id order; one
    stable sort rather than a pass over the file per graph (datasets of many small graphs)."""
    gids, inverse = _unique(t.graph_ids(field), "graph ids", t.path, return_inverse=True)
    order = np.argsort(inverse.reshape(-1), kind="stable")
    ends = np.cumsum(np.bincount(inverse.reshape(-1), minlength=len(gids)))
    return [(gid, order[end - n:end]) for gid, end, n in zip(gids.tolist(), ends, np.diff(ends, prepend=0))]


def _in_graph(gid, multi: bool) -> str:
    return f" of graph {gid}" if multi else ""


def _node_tables(tables) -> dict:
    """{graph id: {node type: (sorted unique node ids, {name: feature tensor in that order})}}."""
    nodes: dict = {}
    for meta, t in tables:
        multi = meta.graph_id_field in t.ids
        for gid, rows in _groups(t, meta.graph_id_field):
            ids, first, counts = _unique(t.ids[meta.node_id_field][rows], "node ids", t.path, return_index=True,
                                         return_counts=True)
            if (counts > 1).any():
                raise DGLError(f"CSVDataset: {t.path}: node ids{_in_graph(gid, multi)} must be unique, but "
                               f"{ids[counts > 1][:10].tolist()} repeat")
            order = torch.as_tensor(rows[first])
            nodes.setdefault(gid, {})[meta.ntype] = (ids, {k: v[order] for k, v in t.data.items()})
    return nodes


def _positions(node_ids: np.ndarray, ids: np.ndarray, end: str, etype, gid, multi: bool, path: str) -> torch.Tensor:
    """Where each of an edge file's src (or dst) ids sits among the sorted node ids of its node type."""
    try:
        ids = ids.astype(node_ids.dtype)
        pos = np.searchsorted(node_ids, ids)
    except (TypeError, ValueError):
        raise DGLError(f"CSVDataset: {path}: {end} ids of edge type {etype}{_in_graph(gid, multi)} are not of the "
                       f"kind of the node ids of type '{etype[0 if end == 'src' else 2]}' ({node_ids.dtype})") from None
    bad = (pos >= len(node_ids)) | (node_ids[np.minimum(pos, len(node_ids) - 1)] != ids)  # a node type has >= 1 id
    if bad.any():
        ntype = etype[0 if end == "src" else 2]
        raise DGLError(f"CSVDataset: {path}: {end} ids {ids[bad][:10].tolist()} of edge type {etype}"
                       f"{_in_graph(gid, multi)} are not ids of '{ntype}' nodes (node ids out of range)")
    return torch.as_tensor(pos, dtype=torch.int64)


def _edge_tables(tables, nodes: dict, node_files: dict) -> dict:
    """{graph id: {canonical edge type: (src positions, dst positions, {name: feature tensor})}}."""
    edges: dict = {}
    for meta, t in tables:
        etype = tuple(meta.etype)
        multi = meta.graph_id_field in t.ids
        for gid, rows in _groups(t, meta.graph_id_field):
            ends = []
            for end, field, ntype in (("src", meta.src_id_field, etype[0]), ("dst", meta.dst_id_field, etype[2])):
                if ntype not in nodes.get(gid, {}):
                    raise DGLError(f"CSVDataset: {t.path}: edges of type {etype}{_in_graph(gid, multi)} need "
                                   f"'{ntype}' nodes, but {node_files[ntype]} has none in graph {gid}")
                ends.append(_positions(nodes[gid][ntype][0], t.ids[field][rows], end, etype, gid, multi, t.path))
            order = torch.as_tensor(rows)
            edges.setdefault(gid, {})[etype] = (ends[0], ends[1], {k: v[order] for k, v in t.data.items()})
    return edges


def _empty_ids() -> torch.Tensor:
    return torch.zeros(0, dtype=torch.int64)


def _build(ntypes: dict, rels: dict, declared):
    """One graph from its node and edge tables. A graph with no edges at all gets every declared edge type whose
    end node types it has, with no edges (DGL 2.1 raises KeyError there), or DGL's ('_V', '_E', '_V')."""
    if not rels:
        rels = {et: (_empty_ids(), _empty_ids(), {}) for et in declared if et[0] in ntypes and et[2] in ntypes}
        rels = rels or {_HOMO_ETYPE: (_empty_ids(), _empty_ids(), {})}
    g = heterograph({et: (u, v) for et, (u, v, _) in rels.items()},
                    num_nodes_dict={nt: len(ids) for nt, (ids, _) in ntypes.items()}, idtype=torch.int64)
    for nt, (_, data) in ntypes.items():
        for k, v in data.items():
            g.nodes[nt].data[k] = v
    for et, (_, _, data) in rels.items():
        for k, v in data.items():
            g.edges[et].data[k] = v
    return g


class CSVDataset(DGLDataset):
    """dgl.data.CSVDataset: the graphs that data_path's meta.yaml and CSV files describe.

    ndata_parser / edata_parser: one callable for every node (edge) file, or a dict {node type: callable}
    ({(src, etype, dst): callable}); gdata_parser: a callable for the graph file. Each takes the file's
    pandas.DataFrame without its id columns and returns {name: array with one row per CSV row}; files without
    one use DefaultDataParser. Attributes: graphs (list of graphs, in the graph file's row order, or the one
    graph when there is none), data ({name: tensor (num graphs, k)}: each graph file column made 2-D, as
    DGL's), labels (data's only tensor, when it holds one), meta_yaml. ds[i] is graphs[i] (through transform),
    with labels[i] when data holds one tensor, else {name: data[name][i]} when it holds several; a 1-D
    tensor of positions gives a Subset."""

    META_YAML_NAME = "meta.yaml"

    def __init__(self, data_path, force_reload: bool = False, verbose: bool = True, ndata_parser=None,
                 edata_parser=None, gdata_parser=None, transform=None):
        _import("pandas", "pandas")  # fail before anything is read (process imports it again: kept off self to pickle)
        data_path = os.fspath(data_path)
        meta_path = os.path.join(data_path, CSVDataset.META_YAML_NAME)
        if not os.path.isfile(meta_path):
            raise DGLError(f"CSVDataset: {CSVDataset.META_YAML_NAME} cannot be found under {data_path}")
        self.graphs, self.data = None, None
        self.ndata_parser = {} if ndata_parser is None else ndata_parser
        self.edata_parser = {} if edata_parser is None else edata_parser
        self.gdata_parser = gdata_parser
        self.default_data_parser = DefaultDataParser()
        self.meta_yaml = load_yaml_with_sanity_check(meta_path)
        super().__init__(self.meta_yaml.dataset_name, raw_dir=data_path, hash_key=self._source_key(meta_path),
                         force_reload=force_reload, verbose=verbose, transform=transform)

    def _source_key(self, meta_path: str) -> tuple:
        """What the cache's name hashes: meta.yaml's text and each CSV file's size and modification time."""
        with open(meta_path, "rb") as f:
            key = [f.read()]
        entries = self.meta_yaml.node_data + self.meta_yaml.edge_data + [self.meta_yaml.graph_data]
        for m in entries:
            if m is not None:
                path = os.path.join(os.path.dirname(meta_path), m.file_name)
                st = os.stat(path) if os.path.isfile(path) else None
                key.append((m.file_name, None if st is None else (st.st_size, st.st_mtime_ns)))
        return tuple(key)

    def _parser(self, parsers, key):
        if parsers is None:
            return self.default_data_parser
        if callable(parsers):
            return parsers
        return parsers.get(key, self.default_data_parser)

    def process(self):
        meta, base, sep, pd = self.meta_yaml, self.raw_dir, self.meta_yaml.separator, _import("pandas", "pandas")
        node_tables = [(m, _Table(pd, base, m, sep, self._parser(self.ndata_parser, m.ntype),
                                  [(m.node_id_field, True), (m.graph_id_field, False)], "a node file"))
                       for m in meta.node_data]
        edge_tables = [(m, _Table(pd, base, m, sep, self._parser(self.edata_parser, tuple(m.etype)),
                                  [(m.src_id_field, True), (m.dst_id_field, True), (m.graph_id_field, False)],
                                  "an edge file"))
                       for m in meta.edge_data]
        nodes = _node_tables(node_tables)
        edges = _edge_tables(edge_tables, nodes, {m.ntype: t.path for m, t in node_tables})
        declared = [tuple(m.etype) for m in meta.edge_data]
        built = {gid: _build(ntypes, edges.get(gid, {}), declared) for gid, ntypes in nodes.items()}
        if meta.graph_data is None:
            gids, data, where = [0], {}, ("meta.yaml names no graph_data file, so the dataset is the one graph of "
                                          "id 0")
        else:
            m = meta.graph_data
            table = _Table(pd, base, m, sep, self.gdata_parser or self.default_data_parser, [(m.graph_id_field, True)],
                           "the graph file")
            gids = table.ids[m.graph_id_field].tolist()
            repeated = sorted((g for g, n in Counter(gids).items() if n > 1), key=str)
            if repeated:
                raise DGLError(f"CSVDataset: {table.path}: graph ids must be unique, but {repeated[:10]} repeat")
            data = {k: v.reshape(len(gids), -1) for k, v in table.data.items()}
            where = f"{table.path} does not list them"
        missing = sorted(set(built) - set(gids), key=str)
        if missing:
            raise DGLError(f"CSVDataset: the node and edge files hold graph ids {missing[:10]}, but {where}")
        empty = {_HOMO_ETYPE: (_empty_ids(), _empty_ids())}  # a listed graph without nodes, as DGL's
        self.graphs = [built[g] if g in built else heterograph(empty, idtype=torch.int64) for g in gids]
        self.data = data
        self._set_labels()

    def _set_labels(self):
        if len(self.data) == 1:
            self.labels = next(iter(self.data.values()))

    def _cache_file(self) -> str:
        return os.path.join(self.save_path, f"{self.name}_topograph_{self.hash}.bin")

    def has_cache(self) -> bool:
        return os.path.exists(self._cache_file())

    def save(self):
        if self.graphs is None:
            raise DGLError("CSVDataset: no graphs to save")
        save_graphs(self._cache_file(), self.graphs, labels=self.data)
        prefix, ours = f"{self.name}_topograph_", os.path.basename(self._cache_file())
        for old in os.listdir(self.save_path):  # caches of earlier versions of the files: never read again
            if old.startswith(prefix) and old.endswith(".bin") and len(old) == len(ours) and old != ours:
                os.remove(os.path.join(self.save_path, old))

    def load(self):
        self.graphs, self.data = load_graphs(self._cache_file())
        self._set_labels()

    def __getitem__(self, i):
        if isinstance(i, torch.Tensor) and i.dim() == 1:
            return Subset(self, i.cpu())
        g = self.graphs[i] if self._transform is None else self._transform(self.graphs[i])
        if len(self.data) == 1:
            return g, self.labels[i]
        if self.data:
            return g, {k: v[i] for k, v in self.data.items()}
        return g

    def __len__(self) -> int:
        return len(self.graphs)
