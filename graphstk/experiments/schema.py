"""The config schema: one pydantic model per protocol, discriminated on ``protocol``.

Field descriptions are the reference part of docs/experiments.md (:mod:`.schema_doc`). Unknown keys are
refused with the closest known key; datasets and methods are resolved before anything runs.
"""
from __future__ import annotations

import math
import re
from typing import Annotated, Any, ClassVar, Literal, Optional, Union

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator, \
    model_validator

from .datasets import graph_dataset, vector_dataset
from .overrides import DEVICE, override_tasks
from .paper import paper_files
from .params import choice, distinct, fail, first_repeat, type_name, unknown_key
from .registry import get_method

__all__ = ["Task", "MultiTask", "TaskBase", "PROTOCOL_MODELS", "DEVICE"]

PosInt = Annotated[int, Field(ge=1)]
Seed = Annotated[int, Field(ge=0)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]


def _holds(test, message: str):
    """A validator refusing a value ``v`` for which ``test(v)`` is false with ``message.format(v=v)``."""
    def check(v):
        if not test(v):
            raise fail(message.format(v=v))
        return v
    return AfterValidator(check)


Name = Annotated[str, _holds(re.compile(r"[A-Za-z0-9_.\-]+").fullmatch,
                             "use letters, digits, '_', '-' or '.' only (it names the output folder), got {v!r}")]
Fraction = Annotated[float, _holds(lambda v: 0 < v < 1, "must be in (0, 1) (a fraction of all nodes), got {v!r}")]
Device = Annotated[str, _holds(DEVICE.fullmatch, "expected a torch device such as cpu, cuda or cuda:1, got {v!r}")]


class Strict(BaseModel):
    """No type coercion; unknown keys refused with the closest known key."""
    model_config = ConfigDict(extra="forbid", strict=True, validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data):
        for k in data if isinstance(data, dict) and cls.model_config["extra"] == "forbid" else ():
            f = cls.model_fields.get(k)
            if f is None or (f.exclude and k not in ("task", "quick")):   # those two are set by the code
                raise cls._unknown(k, {n for n, g in cls.model_fields.items() if not g.exclude})
        return data

    @classmethod
    def _unknown(cls, key, allowed):
        return unknown_key(key, allowed)


# ------------------------------------------------------------------------------------------ parts
_SBM_KEYS = ("sizes", "p_in", "p_out")
_DCSBM_KEYS = ("nodes", "edges", "classes", "homophily", "exponent", "partitioned")
_OWN = {"karate_club": (), "sbm": (*_SBM_KEYS, "seed"), "dcsbm": (*_DCSBM_KEYS, "seed")}


class GraphSpec(Strict):
    """A generated graph: ``karate_club`` or a stochastic block model ``sbm`` (networkx), or the
    degree-corrected block model ``dcsbm`` (:func:`graphstk.data.make_dcsbm`, any size)."""
    kind: Literal["karate_club", "sbm", "dcsbm"] = Field(description="karate_club | sbm | dcsbm")
    sizes: list[Annotated[int, Field(ge=2)]] = Field([100, 100, 100], description="sbm block sizes")
    p_in: Annotated[float, Field(ge=0, le=1)] = Field(0.1, description="sbm: in-block edge probability")
    p_out: Annotated[float, Field(ge=0, le=1)] = Field(0.01, description="sbm: between-block probability")
    seed: Seed = Field(0, description="sbm / dcsbm: generator seed")
    nodes: Optional[Annotated[int, Field(ge=2)]] = Field(None, description="dcsbm: number of nodes")
    edges: Optional[Annotated[int, Field(ge=0)]] = Field(None, description="dcsbm: undirected edges drawn")
    classes: Optional[PosInt] = Field(None, description="dcsbm: number of classes (default 10)")
    homophily: Optional[Annotated[float, Field(ge=0, le=1)]] = \
        Field(None, description="dcsbm: fraction of edges inside a class (default 0.8)")
    exponent: Optional[Annotated[float, Field(gt=1)]] = Field(None, description="dcsbm: degree tail exponent (2.5)")
    partitioned: Optional[str] = Field(None, description="dcsbm: its partitioned form (python -m graphstk partition), "
                                                         "loaded part by part under --distributed")
    train_per_class: Optional[PosInt] = Field(None, description="own train/val split: train nodes per class")
    val_per_class: Optional[PosInt] = Field(None, description="own train/val split: val nodes per class")

    @model_validator(mode="after")
    def _complete(self):
        if (self.train_per_class is None) != (self.val_per_class is None):
            raise fail("missing: give both train_per_class and val_per_class",
                       "val_per_class" if self.val_per_class is None else "train_per_class")
        other = [k for k in self._others() if k in self.model_fields_set]
        if other:
            raise unknown_key(other[0], {"kind", "train_per_class", "val_per_class", *_OWN[self.kind]})
        if self.kind == "dcsbm" and (self.nodes is None or self.edges is None):
            raise fail("missing: a dcsbm graph needs nodes and edges", "nodes" if self.nodes is None else "edges")
        return self

    def resolved(self) -> dict:
        """The generator's keywords (``kind`` included)."""
        return self.model_dump(exclude_none=True, exclude=set(self._others()))

    def _others(self) -> list[str]:
        """The generator keys of the other kinds."""
        return [k for k in (*_SBM_KEYS, *_DCSBM_KEYS, "seed") if k not in _OWN[self.kind]]


class GraphDataset(Strict):
    """A graph dataset: a name (``Cora``), an ``.npz`` path, or a generated ``graph``."""
    name: Optional[str] = Field(None, description="row label (default: the dataset name / file stem / graph kind)")
    path: Optional[str] = Field(None, description="an .npz graph file (relative to the config's folder)")
    graph: Optional[Annotated[GraphSpec, BeforeValidator(lambda v: v if isinstance(v, dict) else {"kind": v})]] = \
        Field(None, description="a generated graph: karate_club, sbm, dcsbm or a mapping")


class VectorDatasetModel(Strict):
    """A vector dataset of the vector protocols (``Digit1``, ``"MNIST 3vs8"`` for one-class)."""
    name: str = Field(description="row label; the dataset name unless 'source' is given")
    source: Optional[str] = Field(None, description="the loader's dataset name (default: name)")
    part: Optional[str] = Field(None, description="use only this part of the dataset (e.g. train)")
    n_per_class: Optional[PosInt] = Field(None, description="a class-balanced subsample of this many per class")
    subsample_seed: Optional[Seed] = Field(None, description="seed of that subsample")
    options: Optional[dict[str, Union[bool, int, float, str]]] = Field(None, description="loader options")
    positive: Optional[Union[int, str]] = Field(None, description="one-class: the class of the set")
    negative: Optional[Union[int, str]] = Field(None, description="one-class: the outlier class")
    noise_std: Optional[Positive] = Field(None, description="Gaussian noise")
    noise_seed: Optional[Seed] = Field(None, description="seed of the noise")


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
    tol: Optional[Positive] = Field(None, description="relative tolerance")
    max_seconds: Optional[Positive] = Field(
        None, description="time budget of each iterative solve, in seconds (default: none)")
    dtype: Literal["float32", "float64"] = Field("float64", description="dtype of kernels and solves")
    step_size: Union[Literal["auto", "paper"], float] = Field(
        "auto", description="Richardson step: auto, paper (Algorithm 2's), or a positive number")

    @field_validator("step_size", mode="before")
    @classmethod
    def _step(cls, v):
        allowed = "auto, paper or a positive number"
        if isinstance(v, str) and v not in ("auto", "paper"):
            raise fail(choice(v, ("auto", "paper"), "step size", shown=allowed))
        if not isinstance(v, str) and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < math.inf):
            raise fail(f"expected {allowed}, got {type_name(v)} {v!r}")
        return v if isinstance(v, str) else float(v)


class PlotModel(Strict):
    """A sweep figure written into the output folder."""
    file: str = Field("plot.png", pattern=r"^[^/\\]+\.png$", description="a plain .png file name")
    x: Optional[str] = Field(None, description="the swept parameter on the x axis (default: the first)")
    title: Optional[str] = None


# ------------------------------------------------------------------------------------------ tasks
_SHARED = ("name", "description", "seeds", "datasets", "methods", "grid", "skip_missing", "paper_table", "plot",
           "device", "protocol", "task")


class Runnable(Strict):
    """What a single-task and a multi-task config share."""
    name: Name = Field("experiment", description="names the output folder (default: the config file's stem)")
    description: str = ""
    quick: bool = Field(False, exclude=True)

    def with_overrides(self, seeds: int | None = None, quick: bool = False, datasets: list[str] | None = None,
                       device: str | None = None):
        """A copy with the command-line ``--seeds N``, ``--quick``, ``--datasets NAME ...`` and ``--device``
        applied; see :func:`graphstk.experiments.config.with_overrides`."""
        tasks = override_tasks(self.all_tasks(), seeds=seeds, quick=quick, datasets=datasets, device=device)
        return self._with_tasks(tasks, quick)


class TaskBase(Runnable):
    """The keys every protocol shares; each protocol's model adds its own and its ``protocol`` tag."""
    GRAPH: ClassVar[bool] = False               # whether the datasets are graphs
    SCORES: ClassVar[str] = "classification"    # the task of the methods it runs
    seeds: Union[PosInt, list[Seed]] = Field(10, description="N (seeds 0..N-1) or a list")
    skip_missing: bool = Field(False, description="skip absent datasets instead of failing")
    paper_table: Optional[str] = Field("auto", description="the paper's numbers to compare with (or null)")
    device: Device = Field("cpu", description="torch device of kernels and estimators, e.g. cpu, cuda, cuda:1")
    grid: dict[str, Any] = Field({}, description="grid values shared by every method that has the parameter")
    methods: list[Union[str, MethodModel]] = Field(min_length=1, description="method names or mappings "
                                                                             "(docs: method catalogue)")
    plot: Optional[PlotModel] = Field(None, description="a sweep figure")
    task: Optional[str] = Field(None, description="(set by a multi-task config) the task's name", exclude=True)

    @classmethod
    def _unknown(cls, key, allowed):
        owners = [p for p, m in PROTOCOL_MODELS.items() if key in m.model_fields and not m.model_fields[key].exclude]
        if owners:
            return fail(f"a key of the {' / '.join(owners)} protocol, not of {cls.model_fields['protocol'].default!r} "
                        f"(this protocol's keys: {', '.join(sorted(k for k in allowed if k not in _SHARED))})", key)
        return unknown_key(key, allowed)

    @field_validator("seeds", "p_test", "n_labeled", check_fields=False)
    @classmethod
    def _as_list(cls, v, info: ValidationInfo):
        """One value, or N seeds ``0..N-1``, as a list; a list must be non-empty and distinct."""
        return distinct(v if isinstance(v, list) else list(range(v)) if info.field_name == "seeds" else [v])

    @model_validator(mode="after")
    def _resolve(self, info: ValidationInfo):
        base_dir = (info.context or {}).get("base_dir")
        self.datasets = [graph_dataset(d, base_dir, "datasets", i) if self.GRAPH else
                         vector_dataset(d, self.protocol, "datasets", i) for i, d in enumerate(self.datasets)]
        i = first_repeat([d.name for d in self.datasets])
        if i is not None:
            raise fail(f"duplicate dataset name {self.datasets[i].name!r} (give each a distinct 'name')", "datasets", i)
        self.methods = [self._method(m, i) for i, m in enumerate(self.methods)]
        shared = {k for m in self.methods for k in get_method(m.label).grid}   # the keys a shared grid sets
        for k in self.grid:
            if k not in shared:
                raise unknown_key(k, shared, "grid", k)
        keys = [(m.label, m.sweep and m.sweep.param, tuple(sorted(m.options.items()))) for m in self.methods]
        i = first_repeat(keys)
        if i is not None:
            opts = f" with the same options ({', '.join(f'{a}: {b}' for a, b in keys[i][2])})" if keys[i][2] else ""
            raise fail(f"method {keys[i][0]!r} is listed twice{opts}; rows must be unique (use one entry, a sweep or "
                       "other options)", "methods", i)
        if self.plot is not None:
            swept = [m.sweep.param for m in self.methods if m.sweep is not None]
            if self.plot.x is not None and self.plot.x not in swept:
                raise fail(f"{self.plot.x!r} is not swept by any method (swept: {swept or 'none'})", "plot", "x")
            if not swept:
                raise fail("a plot needs a method with a 'sweep' (its values are the x axis)", "plot")
            self.plot = self.plot.model_copy(update={"x": self.plot.x or swept[0]})
        return self

    def _method(self, m, i: int):
        """The :class:`~graphstk.experiments.registry.MethodSpec` of entry ``i`` of ``methods``."""
        raw = {"label": m} if isinstance(m, str) else m.model_dump(exclude_unset=True)
        try:
            entry = get_method(raw["label"]).runs_in(self.protocol, self.GRAPH, self.SCORES)
        except ValueError as err:
            raise fail(str(err), "methods", i, *(() if isinstance(m, str) else ("label",))) from None
        return entry.resolve(raw, self.grid, self.setting(), "methods", i)

    def setting(self) -> str:
        """How the protocol hands a split to the methods that do not fix it."""
        return "transductive"

    @property
    def protocol_options(self) -> dict:
        """The protocol's own keys, resolved (``n_labeled``, ``cv_folds``, ...)."""
        return {k: getattr(self, k) for k, f in type(self).model_fields.items() if k not in _SHARED
                and not f.exclude and k not in ("p_test", "planetoid_split", "unreachable", "solver", "paper")}

    def all_tasks(self) -> list["TaskBase"]:
        """The tasks to run: ``[self]``."""
        return [self]

    def _with_tasks(self, tasks: list, quick: bool) -> "TaskBase":
        return tasks[0]

    def to_dict(self) -> dict:
        """The fully resolved config (defaults filled in): what results.json records."""
        out = self.model_dump(mode="json", exclude={"datasets", "methods", "grid"})
        return {**out, "quick": self.quick, "task": self.task, "datasets": [d.identity() for d in self.datasets],
                "methods": [{"label": m.label, "engine": m.engine, "setting": m.setting, "grid": m.grid,
                             "sweep": m.sweep and {"param": m.sweep.param, "values": list(m.sweep.values)},
                             "options": dict(m.options)} for m in self.methods]}


class NodeClassificationTask(TaskBase):
    """``node-classification`` (the default): the STKR paper's Appendix D on graph datasets."""
    protocol: Literal["node-classification"] = "node-classification"
    GRAPH: ClassVar[bool] = True
    datasets: list[Union[str, GraphDataset]] = Field(min_length=1, description="dataset names, .npz paths or mappings")
    p_test: Union[Fraction, list[Fraction]] = Field(0.01, description="fraction(s) of all nodes drawn as test nodes, "
                                                                      "each in (0, 1)")
    planetoid_split: Literal["public", "random"] = Field("public", description="Planetoid train/val: public | random")
    unreachable: Literal["wrong", "class0"] = Field("wrong", description="scoring of all-zero score rows")
    solver: SolverModel = Field(SolverModel(), description="the engines' solver")
    paper_table: Optional[Literal["auto", "table1", "table4", "table5"]] = Field("auto", description="STKR table")


class VectorTask(TaskBase):
    """The keys of the protocols on vector datasets."""
    datasets: list[Union[str, VectorDatasetModel]] = Field(min_length=1, description="vector dataset names or mappings")
    paper: Optional[str] = Field(None, description="paper_numbers/<paper>.json to compare with")
    n_labeled: Union[PosInt, list[PosInt]] = Field(description="labeled points (per class or per split)")

    @field_validator("paper")
    @classmethod
    def _paper(cls, v):
        if v is not None and v not in paper_files():
            raise fail(choice(v, paper_files(), "paper"))
        return v


class FixedSplitsTask(VectorTask):
    """``fixed-splits``: the dataset's own splits, k-fold CV over the labeled points (SSL benchmark)."""
    protocol: Literal["fixed-splits"] = "fixed-splits"
    splits: Union[Literal["all"], list[Seed]] = Field("all", description="split indices")
    cv_folds: Union[Annotated[int, Field(ge=2)], Literal["leave-one-out"]] = Field(
        10, description="folds of the CV over the labeled points, or leave-one-out")
    seeds: list = Field([], exclude=True, validate_default=False)

    @classmethod
    def _unknown(cls, key, allowed):
        if key == "seeds":
            return fail("fixed-splits runs the dataset's own splits: give 'splits' (all, or a list of split "
                        "indices) instead of 'seeds'", "seeds")
        return super()._unknown(key, allowed)

    @field_validator("cv_folds", mode="before")
    @classmethod
    def _loo(cls, v):
        if isinstance(v, str) and v.strip().lower() not in ("leave-one-out", "loo"):
            raise fail(f"expected an integer >= 2 or 'leave-one-out', got {v!r}")
        return "leave-one-out" if isinstance(v, str) else v


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
    SCORES: ClassVar[str] = "one-class"
    n_labeled: list = Field([], exclude=True, validate_default=False)
    n_train: Optional[PosInt] = Field(500, description="training points of the positive class")
    n_test: Optional[PosInt] = Field(200, description="test points of the two classes")
    train_pool: Optional[PosInt] = Field(5000, description="reduced training set (null: the whole part)")
    test_pool: Optional[PosInt] = Field(1000, description="reduced test set (null: the whole part)")
    train_part: Optional[str] = Field("train", description="the dataset part of the training pool")
    test_part: Optional[str] = Field("test", description="the dataset part of the test pool")
    pool_seed: Optional[Seed] = Field(None, description="draw the pools once with this seed")
    balanced: bool = Field(True, description="class-balanced pools")

    def setting(self) -> str:
        return "inductive"


class PlanetoidTask(TaskBase):
    """``planetoid``: the Planetoid public split (train/val/test masks), selection on validation nodes."""
    protocol: Literal["planetoid"] = "planetoid"
    GRAPH: ClassVar[bool] = True
    datasets: list[Union[str, GraphDataset]] = Field(min_length=1, description="dataset names (Cora, CiteSeer, "
                                                                               "PubMed) or .npz paths")
    fit_labels: list[Literal["train", "train+val"]] = Field(["train"], description="labels fitting the reported model")
    grid_test: Literal["every", "chosen"] = Field("every", description="test nodes scored at every grid point (the "
                                                  "ceiling grid_test_max), or only at the chosen one (closed forms)")
    paper: Optional[str] = Field(None, description="paper_numbers/<paper>.json to compare with")


class PerClassSplitsTask(PlanetoidTask):
    """``per-class-splits``: random splits of any graph with k train and m validation nodes per class
    (Shchur et al. 2018: 20 and 30 on the largest connected component, the rest test)."""
    protocol: Literal["per-class-splits"] = "per-class-splits"
    datasets: list[Union[str, GraphDataset]] = Field(min_length=1, description="dataset names or .npz paths")
    train_per_class: PosInt = Field(20, description="train nodes drawn per class and seed")
    val_per_class: PosInt = Field(30, description="validation nodes drawn per class and seed")
    n_test: Optional[PosInt] = Field(None, description="test nodes drawn from the rest (default: all of the rest)")
    largest_component: bool = Field(False, description="restrict each graph to its largest connected component")


PROTOCOL_MODELS = {m.model_fields["protocol"].default: m for m in (
    NodeClassificationTask, FixedSplitsTask, LabeledPerClassTask, OneClassTask, PlanetoidTask, PerClassSplitsTask)}
Task = Annotated[Union[tuple(PROTOCOL_MODELS.values())], Field(discriminator="protocol")]


class MultiTask(Runnable):
    """A config with ``tasks:``: its other keys are defaults shared by every task."""
    tasks: list[Task] = Field(min_length=1, description="the tasks, each a config of its own protocol")

    @model_validator(mode="before")
    @classmethod
    def _merge(cls, data):
        if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
            return data
        own = {k: data[k] for k in ("name", "description", "quick") if k in data}
        shared = {k: v for k, v in data.items() if k not in own and k != "tasks"}
        known = {k for m in PROTOCOL_MODELS.values() for k, f in m.model_fields.items() if not f.exclude}
        for k in shared:
            if k not in known:
                raise unknown_key(k, known)
        tasks = [{"protocol": "node-classification", **shared, **t, "task": t.get("name", f"task{i}"),
                  "name": t.get("name", f"task{i}")} if isinstance(t, dict) else t for i, t in enumerate(data["tasks"])]
        for i, t in enumerate(data["tasks"]):
            if isinstance(t, dict) and "tasks" in t:
                raise fail("tasks cannot be nested", "tasks", i, "tasks")
        i = first_repeat([t.get("task") for t in tasks if isinstance(t, dict)])
        if i is not None:
            raise fail(f"duplicate task name {tasks[i]['task']!r}", "tasks", i, "name")
        return {**own, "tasks": tasks}

    @property
    def plot(self) -> None:
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

    def _with_tasks(self, tasks: list, quick: bool) -> "MultiTask":
        return self.model_copy(update={"tasks": tasks, "quick": quick or self.quick})

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "quick": self.quick,
                "tasks": [t.to_dict() for t in self.tasks]}
