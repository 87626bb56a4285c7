

def refuses_wide_unsigned(x, *, axis, k, largest=True):
    """Has no kernel for uint32 and uint64, and says so naming the type: one finding per type."""
    x = np.asarray(x)
    if x.dtype in (np.uint32, np.uint64):
        raise TypeError(f"unsupported dtype {x.dtype.name} for top_k")
    return reference_topk(x, axis=axis, k=k, largest=largest)
