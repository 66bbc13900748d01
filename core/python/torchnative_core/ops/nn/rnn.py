"""Recurrent layers (aten.lstm / gru / rnn_tanh / rnn_relu, the `.input` overloads nn.LSTM and
friends call) and their cells, composed of linear algebra as upstream's CPU path computes them:
the input projection of a whole layer at once, then one cell per time step; dropout between
layers in training; bidirectional layers run backward in time.
"""

from __future__ import annotations

from .. import impl


def _lstm_cell(x_proj, h, c, w_hh, b_hh):
    import torch

    gates = x_proj + torch.nn.functional.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _gru_cell(x_proj, h, w_hh, b_hh):
    import torch

    hr, hz, hn = torch.nn.functional.linear(h, w_hh, b_hh).chunk(3, 1)
    xr, xz, xn = x_proj.chunk(3, 1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return (h - n) * z + n  # (1 - z) * n + z * h


def _simple_cell(act):
    import torch

    def cell(x_proj, h, w_hh, b_hh):
        return act(x_proj + torch.nn.functional.linear(h, w_hh, b_hh))

    return cell


def _run(kind, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    import torch
    import torch.nn.functional as F

    per = 4 if has_biases else 2
    dirs = 2 if bidirectional else 1
    if len(params) != per * num_layers * dirs:
        raise NotImplementedError(
            f"aten.{kind}.input with {len(params)} parameter tensors (LSTM projections, proj_size) is not implemented "
            "in torchnative yet"
        )
    x = input.transpose(0, 1) if batch_first else input  # (T, B, F)
    h0 = hx[0] if kind == "lstm" else hx
    c0 = hx[1] if kind == "lstm" else None
    hs, cs = [], []
    cell = {"gru": _gru_cell, "rnn_tanh": _simple_cell(torch.tanh), "rnn_relu": _simple_cell(torch.relu)}.get(kind)
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = (layer * dirs + d) * per
            w_ih, w_hh = params[k], params[k + 1]
            b_ih, b_hh = (params[k + 2], params[k + 3]) if has_biases else (None, None)
            seq = x.flip(0) if d == 1 else x
            proj = F.linear(seq, w_ih, b_ih)  # the whole layer's input projection at once
            h = h0[layer * dirs + d]
            c = c0[layer * dirs + d] if c0 is not None else None
            steps = []
            for t in range(seq.shape[0]):
                if kind == "lstm":
                    h, c = _lstm_cell(proj[t], h, c, w_hh, b_hh)
                else:
                    h = cell(proj[t], h, w_hh, b_hh)
                steps.append(h)
            out = torch.stack(steps, 0) if steps else proj.new_zeros((0,) + tuple(h.shape))
            outs.append(out.flip(0) if d == 1 else out)
            hs.append(h)
            if c is not None:
                cs.append(c)
        x = torch.cat(outs, 2) if dirs == 2 else outs[0]
        if dropout > 0 and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    output = x.transpose(0, 1) if batch_first else x
    if kind == "lstm":
        return output, torch.stack(hs, 0), torch.stack(cs, 0)
    return output, torch.stack(hs, 0)


def _register(kind):
    def run(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        return _run(kind, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first)

    run.__name__ = kind
    impl(f"{kind}.input")(run)


for _kind in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
    _register(_kind)


# --- recurrent cells (RNN.cpp: GRUCell, LSTMCell, SimpleCell) ------------------------------------

def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    import torch

    return torch.nn.functional.linear(input, w_ih, b_ih), torch.nn.functional.linear(hx, w_hh, b_hh)


@impl("gru_cell")
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    reset = (h_r + i_r).sigmoid()
    update = (h_z + i_z).sigmoid()
    new = (i_n + h_n * reset).tanh()
    return (hx - new) * update + new


@impl("lstm_cell")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return (o.sigmoid() * cy.tanh(), cy)


@impl("rnn_tanh_cell")
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


@impl("rnn_relu_cell")
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()
