"""torch.export, torch.fx, FakeTensorMode and torch.compile programs, run on ours and on upstream
by tests/test_export.py.

Writes a JSON (argv[1]) with, per case, either the exported graph (every node's op, target and
output shape/dtype, the graph signature) and the exported program's outputs, or the exception
type and message start; and an npz (argv[2]) of every array. Seeded, so both sides see the same
numbers."""

import json
import os
import sys
import tempfile
import traceback
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_num_threads(1)
report: dict = {}
arrays: dict = {}


def _shape(v):
    if isinstance(v, torch.Tensor):
        return [[d if isinstance(d, int) else str(d) for d in v.shape], str(v.dtype)]
    if isinstance(v, (list, tuple)):
        return [_shape(x) for x in v]
    return None if v is None else type(v).__name__


def _target(n):
    t = n.target
    return t if isinstance(t, str) else getattr(t, "__name__", None) and str(t)


def graph_of(gm):
    return [[n.op, _target(n), _shape(n.meta.get("val"))] for n in gm.graph.nodes]


def put(name, value):
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            put(f"{name}.{i}", v)
    elif isinstance(value, torch.Tensor):
        arrays[name] = value.detach().numpy().copy()


def case(name):
    def run(fn):
        try:
            report[name] = fn()
        except Exception as e:  # the refusal is the result: compared with upstream's
            report[name] = {"error": type(e).__name__, "message": str(e).splitlines()[0][:160] if str(e) else "",
                            "where": traceback.format_exc().splitlines()[-3][:200]}
        return fn

    return run


def export_case(name, model, args, kwargs=None, decompose=False, roundtrip=False):
    @case(name)
    def _():
        ep = torch.export.export(model, args, kwargs=kwargs or {})
        if decompose:
            ep = ep.run_decompositions()
        if roundtrip:
            path = os.path.join(tempfile.mkdtemp(), "model.pt2")
            torch.export.save(ep, path)
            ep = torch.export.load(path)
        result = ep.module()(*args, **(kwargs or {}))
        put(name + ".out", result)
        put(name + ".eager", model(*args, **(kwargs or {})))
        sig = ep.graph_signature
        return {"graph": graph_of(ep.graph_module),
                "inputs": [[s.kind.name, getattr(s.arg, "name", None), s.target] for s in sig.input_specs],
                "outputs": [[s.kind.name, getattr(s.arg, "name", None), s.target] for s in sig.output_specs]}


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(5, 8), nn.Linear(8, 3)

    def forward(self, x):
        return self.b(F.gelu(self.a(x))).softmax(-1)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.fc = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        y = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(y.flatten(1))


class Buffers(nn.Module):
    """A buffer updated in place, a constant tensor attribute, keyword input, tuple output."""

    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(3))
        self.scale = torch.tensor([1.0, 2.0, 3.0])

    def forward(self, x, *, shift):
        self.count.add_(1)
        return x * self.scale + shift, x.sum(0)


class ViewMutation(nn.Module):
    """In-place updates through views (a row, a flattened slice) of an intermediate, both
    returned: functionalization's scatters and view replays."""

    def forward(self, x):
        y = x.clone()
        z = y[0]
        z.mul_(2)
        y.view(-1)[1:3].add_(1)
        return y, z


def onnx_case(name, model, args):
    """torch.onnx.export(dynamo=True): the ONNX graph's operators, and ONNX Runtime's outputs."""
    @case(name)
    def _():
        import contextlib
        import io

        import onnx
        import onnxruntime

        with contextlib.redirect_stdout(io.StringIO()):  # the exporter's progress lines
            program = torch.onnx.export(model, args, dynamo=True)
        path = os.path.join(tempfile.mkdtemp(), "model.onnx")
        program.save(path)
        session = onnxruntime.InferenceSession(path)
        outs = session.run(None, {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)})
        put(name + ".ort", outs[0])
        return {"nodes": [n.op_type for n in onnx.load(path).graph.node],
                "inputs": [i.name for i in session.get_inputs()]}


x5 = torch.randn(4, 5)
img = torch.randn(2, 3, 8, 8)
export_case("linear", nn.Linear(3, 2), (torch.randn(1, 3),))
export_case("mlp", MLP(), (x5,))
export_case("mlp_decomposed", MLP(), (x5,), decompose=True)
export_case("mlp_saved", MLP(), (x5,), roundtrip=True)
export_case("cnn_eval", CNN().eval(), (img,))
export_case("cnn_train", CNN().train(), (img,))
export_case("cnn_train_decomposed", CNN().train(), (img,), decompose=True)
export_case("buffers", Buffers(), (torch.randn(2, 3),), {"shift": torch.randn(3)})
export_case("buffers_decomposed", Buffers(), (torch.randn(2, 3),), {"shift": torch.randn(3)}, decompose=True)
export_case("view_mutation_decomposed", ViewMutation(), (torch.randn(3, 4),), decompose=True)
onnx_case("onnx_mlp", MLP(), (x5,))
onnx_case("onnx_cnn", CNN().eval(), (img,))


@case("func_functionalize")
def _():
    # torch.func.functionalize: intermediate mutations (through views, into a factory's result)
    # and an input's mutation, traced with make_fx as views and as their *_copy variants
    from torch.func import functionalize
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(a):
        b = a + 1
        b.view(-1).add_(1)
        z = torch.zeros(2, 2)
        z[0].add_(b[0])
        return b, z

    def g(x):
        x.mul_(2)
        x[0].add_(1)
        return x.sum()

    a, x = torch.arange(4.0).view(2, 2), torch.arange(4.0)
    put("func_functionalize.f", functionalize(f)(a))
    put("func_functionalize.eager", f(a))
    put("func_functionalize.g", [functionalize(g)(x), x])
    return {remove: make_fx(functionalize(f, remove=remove))(a).code.strip().splitlines()
            for remove in ("mutations", "mutations_and_views")} | \
        {"input_mutation": make_fx(functionalize(g))(torch.arange(4.0)).code.strip().splitlines()}


@case("export_dynamic_shapes")
def _():
    ep = torch.export.export(MLP(), (x5,), dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
    return {"graph": graph_of(ep.graph_module)}


@case("view_input_then_fresh_input")
def _():
    # exported with a view of a larger tensor as input, run with a tensor that is not a view:
    # no guard may refer to the example input's base
    ep = torch.export.export(MLP(), (torch.randn(4, 9)[:, :5],))
    fresh = torch.randn(4, 5)
    put("view_input_then_fresh_input.out", ep.module()(fresh))
    return {"guards": ep._guards_code}


def _transformers_cases():
    from transformers import BertConfig, BertModel, LlamaConfig, LlamaForCausalLM
    from transformers.cache_utils import DynamicCache

    ids = torch.randint(0, 50, (2, 7))
    bert = BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=32, max_position_embeddings=32)).eval()
    export_case("bert", bert, (ids,))
    cfg = LlamaConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                      intermediate_size=32, max_position_embeddings=32)
    llama = LlamaForCausalLM(cfg).eval()

    class Prefill(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = llama

        def forward(self, ids):
            return self.m(input_ids=ids, use_cache=False).logits

    class DecodeStep(nn.Module):
        """One decode step against a KV cache holding the keys and values passed in."""

        def __init__(self):
            super().__init__()
            self.m = llama

        def forward(self, ids, k, v):
            cache = DynamicCache(config=cfg)
            cache.update(k, v, 0)
            out = self.m(input_ids=ids, cache=cache, use_cache=True)
            return out.logits, out.past_key_values.layers[0].keys

    export_case("llama_prefill", Prefill(), (ids,))

    class FirstOutput(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids):
            return self.m(input_ids=ids)[0]

    # GPT-2 (split views into attention), a T5 encoder (relative position buckets: where with
    # numbers), RoBERTa (position ids from the mask: type_as)
    from transformers import GPT2Config, GPT2LMHeadModel, RobertaConfig, RobertaModel, T5Config, T5EncoderModel

    export_case("gpt2", FirstOutput(GPT2LMHeadModel(GPT2Config(vocab_size=50, n_embd=16, n_layer=1, n_head=2,
                                                               n_positions=32)).eval()), (ids,))
    export_case("t5_encoder", FirstOutput(T5EncoderModel(T5Config(vocab_size=50, d_model=16, d_kv=8, d_ff=32,
                                                                  num_layers=1, num_heads=2)).eval()), (ids,))
    export_case("roberta", FirstOutput(RobertaModel(RobertaConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                                                  num_attention_heads=2, intermediate_size=32,
                                                                  max_position_embeddings=40)).eval()), (ids,))
    export_case("llama_decode_kv_cache", DecodeStep(), (ids[:, :1], torch.randn(2, 1, 5, 8), torch.randn(2, 1, 5, 8)))
    # run_decompositions (functionalization, the core ATen decompositions) and ONNX
    export_case("bert_decomposed", bert, (ids,), decompose=True)
    export_case("llama_decode_decomposed", DecodeStep(), (ids[:, :1], torch.randn(2, 1, 5, 8),
                                                          torch.randn(2, 1, 5, 8)), decompose=True)
    onnx_case("onnx_bert", FirstOutput(bert), (ids,))
    onnx_case("onnx_llama", Prefill(), (ids,))
    # OPT: the ONNX exporter's type promotion re-picks an overload by checking each schema
    from transformers import OPTConfig, OPTForCausalLM

    onnx_case("onnx_opt", FirstOutput(OPTForCausalLM(OPTConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, ffn_dim=32,
        max_position_embeddings=32, word_embed_proj_dim=16)).eval()), (ids,))


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _transformers_cases()


@case("fx_symbolic_trace")
def _():
    gm = torch.fx.symbolic_trace(MLP())
    put("fx_symbolic_trace.out", gm(x5))
    return {"code": gm.code.strip().splitlines()}


@case("make_fx_fake")
def _():
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(a, b):
        return (a @ b).relu().sum(1) * 2 + torch.tensor(1.0)

    gm = make_fx(f, tracing_mode="fake")(torch.randn(3, 4), torch.randn(4, 5))
    put("make_fx_fake.out", gm(torch.ones(3, 4), torch.ones(4, 5)))
    return {"graph": graph_of(gm)}


@case("fake_tensor_mode")
def _():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode() as mode:
        a = torch.empty(8, 5)
        out = MLP()(a)
        conv = nn.Conv2d(3, 6, 3, stride=2)(torch.empty(2, 3, 9, 9))
    real = mode.from_tensor(torch.ones(4, 4))
    with mode:
        t = (real.t() @ real)[1:, ::2]
    return {"types": [type(v).__name__ for v in (out, conv, t)], "shapes": _shape([out, conv, t]),
            "strides": [list(v.stride()) for v in (out, conv, t)], "device": str(out.device)}


@case("wrapper_subclass_logging")
def _():
    # torch.testing's LoggingTensor: a _make_wrapper_subclass tensor whose __torch_dispatch__
    # logs every operator (forward only: autograd's own saved-tensor calls differ, docs/export.md)
    from torch.testing._internal.logging_tensor import LoggingTensor, capture_logs

    with capture_logs() as logs:
        x = LoggingTensor(torch.ones(2, 3))
        y = (x * 2 + 1).sum(0)
        z = F.linear(x, LoggingTensor(torch.full((4, 3), 0.5)))
        w = torch.ones(3) + y
    put("wrapper_subclass_logging.out", [y.elem, z.elem, w.elem])
    return {"log": logs, "types": [type(v).__name__ for v in (y, z, w)], "device": str(y.device),
            "is_meta": y.is_meta, "shape": list(z.shape)}


@case("compile_eager")
def _():
    model = MLP()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = torch.compile(model, backend="eager")
        put("compile_eager.out", compiled(x5))
        fn = torch.compile(lambda a: torch.sin(a) * 2, fullgraph=True)
        put("compile_fn.out", fn(x5))
    put("compile_eager.ref", model(x5))
    return {"is_compiling": torch.compiler.is_compiling()}


@case("export_data_dependent_refused")
def _():
    class Nonzero(nn.Module):
        def forward(self, x):
            return x[x > 0].sum() if x.sum() > 0 else x

    torch.export.export(Nonzero(), (torch.randn(4),))


json.dump(report, open(sys.argv[1], "w"), indent=1)
np.savez(sys.argv[2], **arrays)
