"""Neural-network tooling above torch: `torchnative.nn.federated` (federated learning on torch.distributed).

Submodules are imported on use (``from torchnative.nn import federated``), so importing this
package loads nothing."""
