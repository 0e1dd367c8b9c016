"""The config schema: one pydantic model per protocol, discriminated on ``protocol``.

Every key of a config is a field of these models (their descriptions are the reference of
docs/experiments.md, written by :mod:`graphstk.experiments.schema_doc`); unknown keys are
refused with the closest known key, and every method's grid value is checked against the
parameter declarations of its registration (:mod:`graphstk.experiments.registry`) before
anything runs. :mod:`graphstk.experiments.config` turns validation errors into
:class:`~graphstk.experiments.config.ConfigError` with the key path.
"""
from __future__ import annotations

import difflib
import re
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from .specs import DatasetSpec, PlotSpec, Sweep, resolve_methods

__all__ = ["Task", "MultiTask", "PROTOCOL_MODELS", "fail", "unknown_key"]

PosInt = Annotated[int, Field(ge=1)]


def _name(v: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", v):
        raise fail(f"use letters, digits, '_', '-' or '.' only (it names the output folder), got {v!r}")
    return v


Name = Annotated[str, AfterValidator(_name), Field(description="letters, digits, '_', '-', '.'")]


def _fraction(v: float) -> float:
    if not 0.0 < v < 1.0:
        raise fail(f"must be in (0, 1) (a fraction of all nodes), got {v!r}")
    return v


Fraction = Annotated[float, AfterValidator(_fraction)]


def fail(message: str, *at) -> PydanticCustomError:
    """A config error at the current model's path plus ``at`` (keys and list indices)."""
    return PydanticCustomError("config", "{message}", {"message": message, "at": at})


def unknown_key(key, allowed, extra: str = "") -> PydanticCustomError:
    close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return fail(extra or f"unknown key{hint} (allowed: {', '.join(sorted(allowed))})", key)


def _nonempty(v: list, at=()) -> list:
    if not v:
        raise fail("empty list (give at least one value)", *at)
    if len({repr(x) for x in v}) != len(v):
        raise fail(f"duplicate values in {v}", *at)
    return v


class Strict(BaseModel):
    """No type coercion; unknown keys refused with the closest known key."""
    model_config = ConfigDict(extra="forbid", strict=True, validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data):
        if isinstance(data, dict) and cls.model_config.get("extra") != "allow":
            allowed = set(cls.model_fields) - {"protocol_name"}
            for k in data:
                if k not in allowed:
                    raise cls._unknown(k, allowed)
        return data

    @classmethod
    def _unknown(cls, key, allowed):
        return unknown_key(key, allowed)


# ------------------------------------------------------------------------------------------ parts
class GraphSpec(Strict):
    """A generated graph (networkx): ``karate_club`` or a stochastic block model ``sbm``."""
    kind: Literal["karate_club", "sbm"] = Field(description="karate_club | sbm")
    sizes: Optional[list[Annotated[int, Field(ge=2)]]] = Field(None, description="sbm block sizes (default [100]*3)")
    p_in: Optional[Annotated[float, Field(ge=0, le=1)]] = Field(None, description="sbm: in-block edge probability")
    p_out: Optional[Annotated[float, Field(ge=0, le=1)]] = Field(None, description="sbm: between-block probability")
    seed: Optional[Annotated[int, Field(ge=0)]] = Field(None, description="sbm: generator seed (default 0)")
    train_per_class: Optional[PosInt] = Field(None, description="own train/val split: train nodes per class")
    val_per_class: Optional[PosInt] = Field(None, description="own train/val split: val nodes per class")

    @model_validator(mode="after")
    def _complete(self):
        if (self.train_per_class is None) != (self.val_per_class is None):
            raise fail("missing: give both train_per_class and val_per_class",
                       "val_per_class" if self.val_per_class is None else "train_per_class")
        if self.kind == "karate_club":
            bad = [k for k in ("sizes", "p_in", "p_out", "seed") if getattr(self, k) is not None]
            if bad:
                raise unknown_key(bad[0], {"kind", "train_per_class", "val_per_class"})
        return self

    def resolved(self) -> dict:
        split = {} if self.train_per_class is None else {"train_per_class": self.train_per_class,
                                                         "val_per_class": self.val_per_class}
        if self.kind == "karate_club":
            return {"kind": self.kind, **split}
        return {"kind": "sbm", "sizes": self.sizes or [100, 100, 100], "p_in": 0.1 if self.p_in is None else self.p_in,
                "p_out": 0.01 if self.p_out is None else self.p_out, "seed": self.seed or 0, **split}


class GraphDataset(Strict):
    """A graph dataset: a name (``Cora``), an ``.npz`` path, or a generated ``graph``."""
    name: Optional[str] = Field(None, description="row label (default: the dataset name / file stem / graph kind)")
    path: Optional[str] = Field(None, description="an .npz graph file (relative to the config's folder)")
    graph: Optional[Union[Literal["karate_club", "sbm"], GraphSpec]] = Field(None, description="a generated graph")


class VectorDataset(Strict):
    """A vector dataset of the vector protocols (``Digit1``, ``"MNIST 3vs8"`` for one-class)."""
    name: str = Field(description="row label; the dataset name unless 'source' is given")
    source: Optional[str] = Field(None, description="the loader's dataset name (default: name)")
    part: Optional[str] = Field(None, description="use only this part of the dataset (e.g. train)")
    n_per_class: Optional[PosInt] = Field(None, description="a class-balanced subsample of this many per class")
    subsample_seed: Optional[Annotated[int, Field(ge=0)]] = Field(None, description="seed of that subsample")
    options: Optional[dict[str, Union[bool, int, float, str]]] = Field(None, description="loader options")
    positive: Optional[Union[int, str]] = Field(None, description="one-class: the class of the set")
    negative: Optional[Union[int, str]] = Field(None, description="one-class: the outlier class")
    noise_std: Optional[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(None, description="Gaussian noise")
    noise_seed: Optional[Annotated[int, Field(ge=0)]] = Field(None, description="seed of the noise")


class SweepModel(Strict):
    """One results row per value of ``param`` (the other parameters are selected)."""
    param: str = Field(description="a grid parameter of the method")
    values: Union[list[Any], bool, int, float, str] = Field(description="its values")


class MethodModel(Strict):
    """A method by name, with its grid, fixed options and sweep; keys of the method's declared
    options (e.g. ``support`` of SP-topd) may be written here directly."""
    model_config = ConfigDict(extra="allow", strict=True)
    label: str = Field(description="a registered method name (docs: method catalogue)")
    grid: Optional[dict[str, Any]] = Field(None, description="param -> list of values (null removes an optional one)")
    sweep: Optional[SweepModel] = Field(None, description="one row per value of one parameter")
    fixed: Optional[dict[str, Any]] = Field(None, description="fixed options of the method")


class SolverModel(Strict):
    """The solver of the STKR engines (node-classification)."""
    solver: Literal["auto", "richardson", "cg", "gmres", "direct"] = Field("auto", description="engine route")
    max_iter: Optional[PosInt] = Field(None, description="iteration limit (default: the engine's)")
    tol: Optional[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(None, description="relative tolerance")
    dtype: Literal["float32", "float64"] = Field("float64", description="dtype of kernels and solves")
    step_size: Union[Literal["auto", "paper"], float] = Field(
        "auto", description="Richardson step: auto, paper (Algorithm 2's), or a positive number")

    @field_validator("step_size", mode="before")
    @classmethod
    def _step(cls, v):
        allowed = "auto, paper or a positive number"
        if isinstance(v, str):
            if v in ("auto", "paper"):
                return v
            close = difflib.get_close_matches(v, ["auto", "paper"], n=1)
            raise fail(f"unknown step size {v!r}; {'did you mean ' + repr(close[0]) + '? ' if close else ''}"
                       f"(allowed: {allowed})")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < float("inf"):
            raise fail(f"expected {allowed}, got {type(v).__name__} {v!r}")
        return float(v)


class PlotModel(Strict):
    """A sweep figure written into the output folder."""
    file: str = Field("plot.png", pattern=r"^[^/\\]+\.png$", description="a plain .png file name")
    x: Optional[str] = Field(None, description="the swept parameter on the x axis (default: the first)")
    title: Optional[str] = None


# ------------------------------------------------------------------------------------------ tasks
_SHARED = ("name", "description", "seeds", "datasets", "methods", "grid", "skip_missing", "paper_table", "plot",
           "device", "protocol", "task")


class TaskBase(Strict):
    name: Name = Field("experiment", description="names the output folder (default: the config file's stem)")
    description: str = ""
    seeds: Union[PosInt, list[Annotated[int, Field(ge=0)]]] = Field(10, description="N (seeds 0..N-1) or a list")
    skip_missing: bool = Field(False, description="skip absent datasets instead of failing")
    paper_table: Optional[str] = Field("auto", description="the paper's numbers to compare with (or null)")
    device: str = Field("cpu", description="torch device of kernels and estimators, e.g. cpu, cuda, cuda:1")
    grid: dict[str, Any] = Field({}, description="grid values shared by every method that has the parameter")
    methods: list[Union[str, MethodModel]] = Field(description="method names or mappings (docs: method catalogue)")
    plot: Optional[PlotModel] = Field(None, description="a sweep figure")
    task: Optional[str] = Field(None, description="(set by a multi-task config) the task's name", exclude=True)
    quick: bool = Field(False, exclude=True)

    @classmethod
    def _unknown(cls, key, allowed):
        owners = [p for p, m in PROTOCOL_MODELS.items() if key in m.model_fields]
        if owners:
            return fail(f"a key of the {' / '.join(owners)} protocol, not of {cls.model_fields['protocol'].default!r} "
                        f"(this protocol's keys: {', '.join(sorted(set(cls.model_fields) - set(_SHARED)))})", key)
        return unknown_key(key, allowed)

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v):
        return list(range(v)) if isinstance(v, int) else _nonempty(v)

    @field_validator("methods", "datasets", check_fields=False)
    @classmethod
    def _listed(cls, v):
        if not v:
            raise fail("empty list (give at least one value)")
        return v

    @field_validator("device")
    @classmethod
    def _device(cls, v):
        if not re.fullmatch(r"(cpu|cuda|mps|xpu)(:\d+)?", v):
            raise fail(f"expected a torch device such as cpu, cuda or cuda:1, got {v!r}")
        return v

    @model_validator(mode="after")
    def _resolve(self, info: ValidationInfo):
        self.datasets = self.dataset_specs((info.context or {}).get("base_dir"))
        names = [d.name for d in self.datasets]
        for i, n in enumerate(names):
            if n in names[:i]:
                raise fail(f"duplicate dataset name {n!r} (give each a distinct 'name')", "datasets", i)
        self.methods = resolve_methods(self.methods, self.grid, self.protocol, self.setting())
        if self.plot is not None:
            self.plot = _plot(self.plot, self.methods)
        return self

    def setting(self) -> str:
        return "inductive"

    @property
    def protocol_options(self) -> dict:
        """The protocol's own keys, resolved (``n_labeled``, ``cv_folds``, ...)."""
        return {k: getattr(self, k) for k, f in type(self).model_fields.items() if k not in _SHARED
                and not f.exclude and k not in ("p_test", "planetoid_split", "unreachable", "solver", "paper")}

    @property
    def tasks(self) -> list:
        return []

    def all_tasks(self) -> list["TaskBase"]:
        """The tasks to run: ``[self]``."""
        return [self]

    def with_overrides(self, **kw):
        """See :func:`graphstk.experiments.config.with_overrides`."""
        from .config import with_overrides

        return with_overrides(self, **kw)

    def to_dict(self) -> dict:
        """The fully resolved config (defaults filled in): what results.json records."""
        out = self.model_dump(mode="json", exclude={"datasets", "methods", "plot", "grid"})
        return {**out, "quick": self.quick, "task": self.task, "datasets": [d.identity() for d in self.datasets],
                "methods": [{"label": m.label, "engine": m.engine, "setting": m.setting, "grid": m.grid,
                             "sweep": None if m.sweep is None else {"param": m.sweep.param,
                                                                    "values": list(m.sweep.values)},
                             "options": dict(m.options)} for m in self.methods],
                "plot": None if self.plot is None else dict(self.plot.__dict__)}


def _plot(p: PlotModel, methods) -> PlotSpec:
    swept = [m.sweep.param for m in methods if m.sweep is not None]
    if p.x is not None and p.x not in swept:
        raise fail(f"{p.x!r} is not swept by any method (swept: {swept or 'none'})", "plot", "x")
    if not swept:
        raise fail("a plot needs a method with a 'sweep' (its values are the x axis)", "plot")
    return PlotSpec(file=p.file, x=p.x or swept[0], title=p.title)


class NodeClassificationTask(TaskBase):
    """``node-classification`` (the default): the STKR paper's Appendix D on graph datasets."""
    protocol: Literal["node-classification"] = "node-classification"
    datasets: list[Union[str, GraphDataset]] = Field(description="dataset names, .npz paths or mappings")
    p_test: Union[Fraction, list[Fraction]] = Field(0.01, description="fraction(s) of all nodes drawn as test nodes, each in (0, 1)")
    planetoid_split: Literal["public", "random"] = Field("public", description="Planetoid train/val: public | random")
    unreachable: Literal["wrong", "class0"] = Field("wrong", description="scoring of all-zero score rows")
    solver: SolverModel = Field(SolverModel(), description="the engines' solver")
    paper_table: Optional[Literal["auto", "table1", "table4", "table5"]] = Field("auto", description="STKR table")

    @field_validator("p_test")
    @classmethod
    def _p(cls, v):
        return _nonempty([v] if isinstance(v, float) else v)

    def setting(self) -> str:
        return "transductive"

    def dataset_specs(self, base_dir=None) -> list[DatasetSpec]:
        from .specs import graph_dataset

        return [graph_dataset(d, base_dir, i) for i, d in enumerate(self.datasets)]


class VectorTask(TaskBase):
    datasets: list[Union[str, VectorDataset]] = Field(description="vector dataset names or mappings")
    paper: Optional[str] = Field(None, description="paper_numbers/<paper>.json to compare with")
    n_labeled: Union[PosInt, list[PosInt]] = Field(description="labeled points (per class or per split)")

    @field_validator("n_labeled")
    @classmethod
    def _n(cls, v):
        return _nonempty([v] if isinstance(v, int) else v)

    @field_validator("paper")
    @classmethod
    def _paper(cls, v):
        from .paper import paper_files

        if v is not None and v not in paper_files():
            close = difflib.get_close_matches(v, paper_files(), n=1)
            raise fail(f"unknown paper {v!r}; {'did you mean ' + repr(close[0]) + '? ' if close else ''}"
                       f"(allowed: {', '.join(paper_files())})")
        return v

    def dataset_specs(self, base_dir=None) -> list[DatasetSpec]:
        from .specs import vector_dataset

        return [vector_dataset(d, self.protocol, i) for i, d in enumerate(self.datasets)]


class FixedSplitsTask(VectorTask):
    """``fixed-splits``: the dataset's own splits, k-fold CV over the labeled points (SSL benchmark)."""
    protocol: Literal["fixed-splits"] = "fixed-splits"
    splits: Union[Literal["all"], list[Annotated[int, Field(ge=0)]]] = Field("all", description="split indices")
    cv_folds: Union[Annotated[int, Field(ge=2)], Literal["leave-one-out"]] = Field(
        10, description="folds of the CV over the labeled points, or leave-one-out")
    seeds: list = Field([], exclude=True, validate_default=False)

    @model_validator(mode="before")
    @classmethod
    def _no_seeds(cls, data):
        if isinstance(data, dict) and "seeds" in data:
            raise fail("fixed-splits runs the dataset's own splits: give 'splits' (all, or a list of split "
                       "indices) instead of 'seeds'", "seeds")
        return data

    @field_validator("cv_folds", mode="before")
    @classmethod
    def _loo(cls, v):
        if isinstance(v, str) and v.strip().lower() in ("leave-one-out", "loo"):
            return "leave-one-out"
        if isinstance(v, str):
            raise fail(f"expected an integer >= 2 or 'leave-one-out', got {v!r}")
        return v

    def setting(self) -> str:
        return "transductive"


class LabeledPerClassTask(VectorTask):
    """``labeled-per-class``: k labeled points per class, a validation set, error on the test points."""
    protocol: Literal["labeled-per-class"] = "labeled-per-class"
    val_per_class: Optional[PosInt] = Field(None, description="validation points per class (default n_labeled)")
    test: Literal["unlabeled", "held-out"] = Field("unlabeled", description="test on the unlabeled points, or held out")
    test_size: Optional[Union[PosInt, Annotated[float, Field(gt=0, lt=1)]]] = Field(
        None, description="held-out: a number of points or a fraction")
    test_part: Optional[str] = Field(None, description="held-out: a part of the dataset, e.g. test")
    n_unlabeled: Optional[PosInt] = Field(None, description="draw this many unlabeled points (default: all)")

    @model_validator(mode="after")
    def _test(self):
        if self.test == "held-out" and (self.test_size is None) == (self.test_part is None):
            raise fail("test: held-out needs exactly one of test_size (a number of points, or a fraction, drawn "
                       "per repetition) and test_part (a part of the dataset, e.g. test)", "test")
        if self.test == "unlabeled" and (self.test_size is not None or self.test_part is not None):
            raise fail("only with test: held-out (test: unlabeled scores the unlabeled points)",
                       "test_size" if self.test_size is not None else "test_part")
        return self

    def setting(self) -> str:
        return "transductive" if self.test == "unlabeled" else "inductive"


class OneClassTask(VectorTask):
    """``one-class``: train on one class, test on it and another, ROC AUC (separating kernels)."""
    protocol: Literal["one-class"] = "one-class"
    n_labeled: list = Field([], exclude=True, validate_default=False)
    n_train: Optional[PosInt] = Field(500, description="training points of the positive class")
    n_test: Optional[PosInt] = Field(200, description="test points of the two classes")
    train_pool: Optional[PosInt] = Field(5000, description="reduced training set (null: the whole part)")
    test_pool: Optional[PosInt] = Field(1000, description="reduced test set (null: the whole part)")
    train_part: Optional[str] = Field("train", description="the dataset part of the training pool")
    test_part: Optional[str] = Field("test", description="the dataset part of the test pool")
    pool_seed: Optional[Annotated[int, Field(ge=0)]] = Field(None, description="draw the pools once with this seed")
    balanced: bool = Field(True, description="class-balanced pools")


PROTOCOL_MODELS = {m.model_fields["protocol"].default: m for m in (
    NodeClassificationTask, FixedSplitsTask, LabeledPerClassTask, OneClassTask)}
Task = Annotated[Union[NodeClassificationTask, FixedSplitsTask, LabeledPerClassTask, OneClassTask],
                 Field(discriminator="protocol")]


class MultiTask(Strict):
    """A config with ``tasks:``: its other keys are defaults shared by every task."""
    name: Name = "experiment"
    description: str = ""
    tasks: list[Task] = Field(description="the tasks, each a config of its own protocol")
    quick: bool = Field(False, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _merge(cls, data):
        if not isinstance(data, dict):
            return data
        tasks = data.get("tasks")
        if not isinstance(tasks, list):
            return data
        shared = {k: v for k, v in data.items() if k not in ("tasks", "name", "description")}
        known = set().union(*(m.model_fields for m in PROTOCOL_MODELS.values()))
        for k in shared:
            if k not in known:
                raise unknown_key(k, known)
        merged = []
        for i, t in enumerate(tasks):
            if isinstance(t, dict) and "tasks" in t:
                raise fail("tasks cannot be nested", "tasks", i, "tasks")
            if isinstance(t, dict):
                t = {**shared, **t, "task": t.get("name", f"task{i}")}
                t.setdefault("name", t["task"])
                t.setdefault("protocol", "node-classification")
            merged.append(t)
        names = [t.get("task") for t in merged if isinstance(t, dict)]
        for i, n in enumerate(names):
            if n in names[:i]:
                raise fail(f"duplicate task name {n!r}", "tasks", i, "name")
        return {"name": data.get("name", "experiment"), "description": data.get("description", ""), "tasks": merged,
                **({"quick": data["quick"]} if "quick" in data else {})}

    @property
    def plot(self):
        return None

    @property
    def task(self):
        return None

    @property
    def datasets(self) -> list:
        return [d for t in self.tasks for d in t.datasets]

    @property
    def methods(self) -> list:
        return [m for t in self.tasks for m in t.methods]

    def all_tasks(self) -> list[TaskBase]:
        """The tasks to run."""
        return list(self.tasks)

    def with_overrides(self, **kw):
        """See :func:`graphstk.experiments.config.with_overrides`."""
        from .config import with_overrides

        return with_overrides(self, **kw)

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "quick": self.quick,
                "tasks": [t.to_dict() for t in self.tasks]}
