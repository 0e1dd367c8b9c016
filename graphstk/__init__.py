"""graphstk: graph semi-supervised learning with spectrally transformed kernels.

See README.md for a tour. Public entry points are re-exported here.
"""
from . import operators
from .operators import DenseOperator, GraphKernel, KernelOperator, SparseOperator
from . import features, mmd
from . import data
from .data import (DatasetNotFoundError, Split, dataset_statistics, load_dataset, make_split,
                   resolve_data_root)
from .data import VECTOR_DATASETS, VectorDataset, load_vector_dataset, make_circle, make_two_lines

from . import methods, spectral, transforms
from .methods import STKR, LabelPropagation, predict_grid
from .transforms import InverseLaplacian, Polynomial, ReciprocalPolynomial, TopD

__version__ = "0.1.0"
