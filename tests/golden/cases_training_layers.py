"""Layers and losses training uses beyond the basics, each trained three SGD steps on both sides:
losses per step and the input gradient must agree (normalisations, transposed and 1-D
convolutions, pools, recurrent layers, activations, losses, more optimizers and schedulers)."""
from .registry import F, case, nn, torch


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, 8, 8, generator=g)
    return x, torch.randint(0, 5, (4,), generator=g), torch.randn(4, 6, 3, generator=g)


def _train(build, loss_fn=None, steps=3, opt=None):
    torch.manual_seed(0)
    model = build()
    params = list(model.parameters())
    optim = opt(params) if opt else torch.optim.SGD(params, lr=0.05)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optim, 5)
    x, y, _ = _data()
    x.requires_grad_()
    losses = []
    for _ in range(steps):
        optim.zero_grad()
        x.grad = None
        out = model(x)
        loss = loss_fn(out, y) if loss_fn else F.cross_entropy(out, y)
        loss.backward()
        optim.step()
        sched.step()
        losses.append(loss.detach())
    return losses, x.grad, [p.detach() for p in params]


@case
def group_norm():
    return _train(lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.GroupNorm(2, 4), nn.ReLU(), nn.Flatten(), nn.Linear(144, 5)))


@case
def instance_norm():
    return _train(lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.InstanceNorm2d(4, affine=True, track_running_stats=True),
                                        nn.Flatten(), nn.Linear(144, 5)))


@case
def rms_norm_and_pools():
    return _train(lambda: nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.RMSNorm([4, 8, 8]), nn.AvgPool2d(2),
                                        nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(16, 5)))


@case
def conv_transpose():
    return _train(lambda: nn.Sequential(nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1), nn.Tanh(),
                                        nn.Flatten(), nn.Linear(512, 5)))


@case
def conv1d_maxpool1d():
    return _train(lambda: nn.Sequential(nn.Flatten(2), nn.Conv1d(3, 4, 3), nn.MaxPool1d(2), nn.Flatten(),
                                        nn.Linear(124, 5)))


@case
def activations():
    return _train(lambda: nn.Sequential(nn.Flatten(), nn.Linear(192, 16), nn.PReLU(), nn.ELU(), nn.SELU(), nn.CELU(0.5),
                                        nn.Hardswish(), nn.Mish(), nn.Softplus(), nn.LogSigmoid(), nn.Hardsigmoid(),
                                        nn.Softshrink(0.1), nn.Hardshrink(0.01), nn.Threshold(0.1, 0.0),
                                        nn.Linear(16, 10), nn.GLU(), nn.Linear(5, 5)))


def _rnn(kind, **kw):
    def run():
        torch.manual_seed(0)
        rnn = kind(3, 4, batch_first=True, **kw)
        head = nn.Linear(4 * (2 if kw.get("bidirectional") else 1), 5)
        params = list(rnn.parameters()) + list(head.parameters())
        optim = torch.optim.SGD(params, lr=0.1)
        _, y, seq = _data()
        seq.requires_grad_()
        losses = []
        for _ in range(3):
            optim.zero_grad()
            seq.grad = None
            out = rnn(seq)[0]
            loss = F.cross_entropy(head(out[:, -1]), y)
            loss.backward()
            optim.step()
            losses.append(loss.detach())
        return losses, seq.grad, [p.detach() for p in params]
    return run


@case
def lstm_two_layers():
    return _rnn(nn.LSTM, num_layers=2)()


@case
def gru_bidirectional():
    return _rnn(nn.GRU, bidirectional=True)()


@case
def rnn_tanh_relu():
    return _rnn(nn.RNN)(), _rnn(nn.RNN, nonlinearity="relu")()


@case
def losses_beyond_cross_entropy():
    t = torch.rand(4, 5, generator=torch.Generator().manual_seed(1))

    def loss_fn(out, y):
        return (F.cross_entropy(out, y, label_smoothing=0.1) + F.cross_entropy(out, t.softmax(1))
                + F.binary_cross_entropy(torch.sigmoid(out), t) + F.smooth_l1_loss(out, t, beta=0.5)
                + F.kl_div(F.log_softmax(out, 1), t.softmax(1), reduction="batchmean") + F.huber_loss(out, t, delta=0.3))

    return _train(lambda: nn.Sequential(nn.Flatten(), nn.Linear(192, 5)), loss_fn)


@case
def rmsprop_adagrad_adamax():
    def opt(params):
        return torch.optim.RMSprop(params, lr=0.01, momentum=0.5)

    a = _train(lambda: nn.Sequential(nn.Flatten(), nn.Linear(192, 5)), opt=opt)
    b = _train(lambda: nn.Sequential(nn.Flatten(), nn.Linear(192, 5)), opt=lambda p: torch.optim.Adagrad(p, lr=0.1))
    c = _train(lambda: nn.Sequential(nn.Flatten(), nn.Linear(192, 5)), opt=lambda p: torch.optim.Adamax(p, lr=0.01))
    return a, b, c


@case
def out_arguments():
    """out= overloads: written in place, resized when empty, dtype cast checked, tuple outs."""
    x = torch.ones(3)
    a = torch.empty(0)
    torch.add(x, x, out=a)
    b = torch.empty(3, dtype=torch.float64)
    torch.mul(x, 2.5, out=b)
    v, i = torch.empty(0), torch.empty(0, dtype=torch.long)
    torch.max(torch.tensor([[1., 5.], [7., 2.]]), 1, out=(v, i))
    c = torch.zeros(3)
    r = torch.maximum(x, x * 2, out=c)
    return a, b, v, i, c, r is c


@case
def out_argument_dtype_error():
    torch.mul(torch.ones(3), 2.5, out=torch.empty(3, dtype=torch.int64))


@case
def test_time_adaptation_tent():
    """TENT-style adaptation: the model frozen except batch-norm affine parameters, batch
    statistics in train mode, entropy of the predictions minimised."""
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                        nn.Flatten(), nn.Linear(4, 3))
    net.requires_grad_(False)
    params = []
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.train()
            m.track_running_stats, m.running_mean, m.running_var = False, None, None
            m.weight.requires_grad_(True)
            m.bias.requires_grad_(True)
            params += [m.weight, m.bias]
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    x = torch.randn(8, 1, 6, 6)
    out = []
    for _ in range(3):
        p = net(x).softmax(1)
        ent = -(p * p.log()).sum(1).mean()
        opt.zero_grad()
        ent.backward()
        opt.step()
        out.append((ent.detach(), params[0].detach().clone(), params[1].detach().clone()))
    return out, net[0].weight.grad is None


@case
def federated_averaging():
    """Clients train locally, the server averages their state dicts and loads the average."""
    def client(seed):
        torch.manual_seed(seed)
        m = nn.Linear(4, 2)
        o = torch.optim.SGD(m.parameters(), lr=0.1)
        xb, yb = torch.randn(16, 4), torch.randint(0, 2, (16,))
        for _ in range(5):
            o.zero_grad()
            F.cross_entropy(m(xb), yb).backward()
            o.step()
        return m.state_dict()

    sds = [client(1), client(2), client(3)]
    avg = {k: torch.stack([sd[k] for sd in sds]).mean(0) for k in sds[0]}
    g = nn.Linear(4, 2)
    g.load_state_dict(avg)
    return g.weight.detach(), g.bias.detach()


@case
def conv_same_padding_even_kernels():
    """padding='same' with even kernels: the odd unit of padding goes on the right, as upstream."""
    torch.manual_seed(0)
    x, w = torch.randn(1, 2, 7, 6), torch.randn(3, 2, 4, 3)
    x1, w1 = torch.randn(2, 2, 9), torch.randn(2, 2, 2)
    return F.conv2d(x, w, padding="same"), F.conv2d(x, w, padding="same", dilation=2), F.conv1d(x1, w1, padding="same")
