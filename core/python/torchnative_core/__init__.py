"""Python half of torch._C."""
