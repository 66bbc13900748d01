"""The short-time Fourier transform and its inverse, composed as upstream's
CompositeImplicitAutograd kernels (SpectralOps.cpp) compose them: frames as a strided view of the
(padded) signal, times the window, through the FFT; the inverse by the inverse FFT, windowed
overlap-add and division by the summed squared window."""

from __future__ import annotations

from .. import impl


def _type_string(t):
    """Tensor::toString() as upstream's messages print it: the legacy Python name of a real
    dtype's tensor type, the dispatch key and scalar type otherwise."""
    import torch

    legacy = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
              torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte",
              torch.bool: "Bool"}
    if t.dtype in legacy:
        return f"torch.{legacy[t.dtype]}Tensor"
    names = {torch.complex64: "ComplexFloat", torch.complex128: "ComplexDouble", torch.complex32: "ComplexHalf"}
    return f"CPU{names.get(t.dtype, str(t.dtype))}Type"


def _opt(v):
    return "None" if v is None else str(int(v))


def _shape(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _stft(self, n_fft, hop_length, win_length, window, center, mode, normalized, onesided, return_complex,
          align_to_window):
    import torch

    if window is not None and window.device != self.device:
        raise RuntimeError(f"stft input and window must be on the same device but got self on {self.device} and "
                           f"window on {window.device}")
    hop = hop_length if hop_length is not None else n_fft >> 2
    win = win_length if win_length is not None else n_fft
    complex_out = return_complex if return_complex is not None else (
        self.is_complex() or (window is not None and window.is_complex()))
    if not complex_out and return_complex is None:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                           "require that return_complex=True in a future PyTorch release.")

    def fail(msg, signal):
        w = "None" if window is None else f"{_type_string(window)}{{{_shape(window)}}}"
        raise RuntimeError(f"stft({_type_string(self)}{_shape(signal)}, n_fft={n_fft}, hop_length={hop}, "
                           f"win_length={win}, window={w}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
                           f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) : {msg}")

    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if not (self.is_floating_point() or self.is_complex()):
        fail("expected a tensor of floating point or complex values", self)
    if self.dim() not in (1, 2):
        fail("expected a 1D or 2D tensor", self)
    x = self.unsqueeze(0) if self.dim() == 1 else self
    if center:
        pad = n_fft // 2
        x = torch.nn.functional.pad(x.view(1, *x.shape), [pad, pad], mode).view(x.shape[0], -1)
    length = x.size(1)
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={win}", self)
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}", self)
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}", self)
    if window is not None and (window.dim() != 1 or window.size(0) != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
             f"{_shape(window)}", self)
    w = window
    if win < n_fft:
        left = (n_fft - win) // 2
        if window is not None:
            w = torch.nn.functional.pad(window, [left, n_fft - win - left])
        else:
            w = torch.zeros(n_fft, dtype=self.dtype, device=self.device)
            w[left:left + win] = 1
    if not center and align_to_window:
        p = (n_fft - win) // 2
        x = torch.nn.functional.pad(x, [p, p], mode)
    frames = x.unfold(-1, n_fft, hop)
    if w is not None:
        frames = frames * w
    complex_fft = frames.is_complex()
    one = onesided if onesided is not None else not complex_fft
    norm = "ortho" if normalized else "backward"
    if complex_fft:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = torch.fft.fft(frames, dim=-1, norm=norm)
    else:
        out = torch.fft.rfft(frames, dim=-1, norm=norm) if one else torch.fft.fft(frames, dim=-1, norm=norm)
    out = out.transpose(1, 2)
    if self.dim() == 1:
        out = out.squeeze(0)
    return out if complex_out else torch.view_as_real(out)


@impl("stft")
def stft(self, n_fft, hop_length=None, win_length=None, window=None, normalized=False, onesided=None,
         return_complex=None, align_to_window=None):
    return _stft(self, n_fft, hop_length, win_length, window, False, "constant", normalized, onesided,
                 return_complex, align_to_window)


@impl("stft.center")
def stft_center(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
                normalized=False, onesided=None, return_complex=None, align_to_window=None):
    return _stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                 return_complex, align_to_window)


def _overlap_add(frames, hop, total):
    """Sums (C, n_frames, n_fft) frames placed hop apart into (C, total) (upstream's
    unfold_backward of the framing view)."""
    import torch

    c, n_frames, n_fft = frames.shape
    idx = (torch.arange(n_frames, device=frames.device).unsqueeze(1) * hop
           + torch.arange(n_fft, device=frames.device)).reshape(-1)
    if frames.is_complex():  # the real and imaginary parts added as a trailing pair
        parts = torch.view_as_real(frames).reshape(c, n_frames * n_fft, 2)
        out = torch.zeros(c, total, 2, dtype=parts.dtype, device=frames.device)
        return torch.view_as_complex(out.index_add(1, idx, parts))
    out = torch.zeros(c, total, dtype=frames.dtype, device=frames.device)
    return out.index_add(1, idx, frames.reshape(c, -1))


@impl("istft")
def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    import torch

    if window is not None and window.device != self.device:
        raise RuntimeError(f"istft input and window must be on the same device but got self on {self.device} and "
                           f"window on {window.device}")
    hop = hop_length if hop_length is not None else n_fft >> 2
    win = win_length if win_length is not None else n_fft
    if not self.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")

    def fail(msg):
        w = "None" if window is None else f"{_type_string(window)}{{{_shape(window)}}}"
        raise RuntimeError(f"istft({_type_string(self)}{_shape(self)}, n_fft={n_fft}, hop_length={hop}, "
                           f"win_length={win}, window={w}, center={int(center)}, normalized={int(normalized)}, "
                           f"onesided={_opt(onesided)}, length={'None' if length is None else length}, "
                           f"return_complex={int(return_complex)}) {msg}")

    x = self.resolve_conj()
    ndim = x.dim() + 1  # upstream counts the dimensions of the view_as_real form
    if x.numel() == 0:
        fail(": input tensor cannot be empty.")
    if ndim not in (3, 4):
        fail(f": expected a tensor with 3 or 4 dimensions, but got {ndim}")
    n_frames, fft_size = x.size(-1), x.size(-2)
    total = n_fft + hop * (n_frames - 1)
    one = onesided if onesided is not None else fft_size != n_fft
    if one and n_fft // 2 + 1 != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 when "
             f"onesided=True, but got {fft_size}")
    if not one and n_fft != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
             f"onesided=False, but got {fft_size}")
    if not (0 < hop <= win):
        fail(": expected 0 < hop_length <= win_length")
    if not (0 < win <= n_fft):
        fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.size(0) != win):
        fail(": Invalid window shape. window has to be 1D and length of `win_length`")
    real = torch.float64 if x.dtype == torch.complex128 else torch.float16 if x.dtype == torch.complex32 \
        else torch.float32
    w = window if window is not None else torch.ones(win, dtype=real, device=x.device)
    if win != n_fft:
        left = (n_fft - win) // 2
        w = torch.constant_pad_nd(w, [left, n_fft - win - left], 0)
    if ndim == 3:
        x = x.unsqueeze(0)
    x = x.transpose(1, 2)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = torch.fft.ifft(x, dim=-1, norm=norm)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one:
            x = x[..., :n_fft // 2 + 1]
        frames = torch.fft.irfft(x, n=n_fft, dim=-1, norm=norm)
    y = _overlap_add(frames * w.view(1, 1, n_fft), hop, total)
    envelope = _overlap_add(w.pow(2).expand(1, n_frames, n_fft), hop, total)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else total)
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool(envelope.abs().min().lt(1e-11)):
        fail("window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if ndim == 3:
        y = y.squeeze(0)
    if end > total:
        import warnings

        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.")
        y = torch.constant_pad_nd(y, [0, end - total], 0)
    return y
