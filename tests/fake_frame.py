"""A stand-in for a pandas DataFrame, for tests of column-name handling without pandas."""

import numpy as np


class Frame:
    """The parts of a pandas DataFrame that jaxnb reads (pandas is optional in the tests)."""

    class _ILoc:
        def __init__(self, data):
            self.data = data

        def __getitem__(self, key):
            return self.data[key]

    def __init__(self, data, columns):
        self.data = np.asarray(data)
        self.columns = list(columns)
        self.shape = self.data.shape
        self.iloc = self._ILoc(self.data)
        self.dtypes = Frame._Series([self.data.dtype] * self.shape[1])

    class _Series:
        def __init__(self, values):
            self.iloc = values

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)
