"""Neural-network operators by layer kind: convolution, pooling, normalisation, softmax, attention, dropout, losses, recurrent layers, resampling, padding and patches."""

from . import attention, bilinear, conv, dropout, embedding_bag, randomized_relu, loss, norm, padding, patches, pool, resample, rnn, softmax  # noqa: F401  (registration by import)
