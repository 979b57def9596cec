import tilelang
import tilelang.language as T

def broken(:  # ERROR: T0001
    pass
