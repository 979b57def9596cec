import tilelang
import tilelang.language as T

# ERROR-ANYWHERE: T0200
def helper(x):
    return x * 2
