"""Linear algebra: products, norms and distances, decompositions and solvers, matrix functions, einsum."""

from . import composite, decompositions, eig, einsum, ldl, matrix_exp, norms, products  # noqa: F401  (registration by import)
