"""Flower apps (ClientApp, ServerApp) for scikit-learn's digits with torchnative doing the local training."""
