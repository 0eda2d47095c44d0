"""topograph.data, as dgl.data: the citation graphs Cora and Citeseer (CoraGraphDataset, CiteseerGraphDataset,
CitationGraphDataset; citation_graph.py), read from local Planetoid .npz files (raw_dir, or
$TOPOGRAPH_DATA_DIR/planetoid/). Nothing is downloaded: a missing file is a DGLError saying where to put it.
dgl.data.utils's save_graphs / load_graphs / save_info / load_info are in utils.py; the DGLDataset base class,
Subset and split_dataset in dgl_dataset.py; MiniGCDataset and KarateClubDataset (made, not downloaded) in
synthetic.py; AsNodePredDataset, AsGraphPredDataset and AsLinkPredDataset (task splits over a dataset) in adapter.py;
GNNExplainer's synthetic sets (BAShapeDataset, BACommunityDataset, TreeCycleDataset, TreeGridDataset) and
SBMMixtureDataset, made from a seed as DGL's, in explain_synthetic.py. CSVDataset (a folder of meta.yaml and CSV
files; needs PyYAML and pandas) in csv_dataset.py. SSTDataset (the Stanford Sentiment Treebank's trees, DGL's TreeLSTM
data; raw_dir, or $TOPOGRAPH_DATA_DIR/sst/trees/) in sst.py."""
from . import citation_graph, utils
from . import citation_graph as citegrh  # DGL's alias: `from dgl.data import citegrh`
from .citation_graph import CitationGraphDataset, CiteseerGraphDataset, CoraGraphDataset, load_citeseer, load_cora
from .adapter import AsGraphPredDataset, AsLinkPredDataset, AsNodePredDataset
from .csv_dataset import CSVDataset
from .dgl_dataset import DGLDataset, Subset, split_dataset
from .synthetic import KarateClubDataset, MiniGCDataset
from .sst import SST, SSTDataset
from .explain_synthetic import (BACommunityDataset, BAShapeDataset, SBMMixture, SBMMixtureDataset, TreeCycleDataset,
                                TreeGridDataset)

KarateClub = KarateClubDataset  # DGL's other name


def load_data(args):
    """dgl.data.load_data, the older examples' loader: args.dataset 'cora' or 'citeseer' (an argparse namespace or
    anything with that attribute) -> load_cora() / load_citeseer(). Other names (DGL's 'pubmed', 'reddit...') are a
    ValueError, as DGL's for an unknown name: topograph has no files for them."""
    name = getattr(args, "dataset", None)
    if name == "cora":
        return load_cora()
    if name == "citeseer":
        return load_citeseer()
    raise ValueError(f"Unknown dataset: {name!r} (topograph's load_data has 'cora' and 'citeseer')")


def register_data_args(parser):
    """dgl.data.register_data_args, the older examples' argparse helper: adds --dataset (a str, not required)."""
    parser.add_argument("--dataset", type=str, required=False,
                        help="The input dataset. Can be cora or citeseer (DGL's also pubmed, syn, reddit).")

__all__ = ["CitationGraphDataset", "CoraGraphDataset", "CiteseerGraphDataset", "load_cora", "load_citeseer",
           "citation_graph", "citegrh", "utils", "DGLDataset", "Subset", "split_dataset", "MiniGCDataset",
           "KarateClubDataset", "KarateClub", "AsNodePredDataset",
           "AsGraphPredDataset", "AsLinkPredDataset", "BAShapeDataset", "BACommunityDataset", "TreeCycleDataset",
           "TreeGridDataset", "SBMMixtureDataset", "SBMMixture", "CSVDataset", "SSTDataset", "SST", "load_data", "register_data_args"]
