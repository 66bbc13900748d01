"""Golden cases that torchnative does not pass yet, each with what is missing.

They run as strict xfails: a case listed here that starts passing fails the suite, so the entry
must be removed when the gap closes (and the list can only shrink honestly). When ours is the
reference interpreter (TORCHNATIVE_GOLDEN_OURS=ref) the list does not apply."""

AUTOGRAD = "autograd (issue #6): no graph recording, grad_fn or backward yet"

GAPS = {
    "errors.backward_on_non_scalar": AUTOGRAD,
    "errors.inplace_on_leaf_requiring_grad": AUTOGRAD,
    "misc.repr_requires_grad_and_grad_fn": AUTOGRAD,
    "misc.requires_grad_flags": AUTOGRAD,
    "misc.simple_backward": AUTOGRAD,
    "nn.linear_backward_grads": AUTOGRAD,
    "nn.batchnorm2d_train_updates_running_stats": "aten._native_batch_norm_legit (training-mode batch statistics) has no kernel",
    "joining.flip_roll_repeat_tile": "aten.repeat_interleave has no kernel",
    "linalg.einsum": "aten.einsum is not implemented",
    "linalg.baddbmm_tensordot": "aten.tensordot is not implemented",
    "reductions.count_nonzero_unique": "aten._unique2 has no kernel",
    "reductions.median_mode_kthvalue": "aten.mode is not implemented; kthvalue picks a different index among tied values",
    "views.untyped_storage_shared": "Tensor.untyped_storage (the storage Python object) is not implemented",
}
