"""functorch on the core: `torch.vmap` (batched tensors and the door's vmap step) and the
`torch.func` gradient transforms over the core's autograd. `install` puts upstream's
`torch._C._functorch` names on `_C`; torch/_functorch's Python drives them unchanged."""
