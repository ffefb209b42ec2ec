#!/usr/bin/python3
"""Writes tests/data/torch_fallback_ops.txt: PyTorch's values for the ops oneDNN 2.6 has no
primitive for (class token, ceil-mode average pooling, adaptive average pooling with unequal
windows, hardsigmoid on its own, the softmax cross-entropy loss).

    /usr/bin/python3 bench/torch_fallback_ops.py > tests/data/torch_fallback_ops.txt

Each case is a one-layer graph on an input that requires its gradient, trained one step as every
ridge executor does (engine/backend/executor.h): y = op(x), loss = F.cross_entropy(y viewed as
(N, numel/N), labels), backward. Inputs, parameters and labels follow formulas that give exact
dyadic values, written again in tests/test_fallback_ops.cpp, so the file holds only results:
the output, the loss and every gradient, computed in float64 and printed with 17 significant
digits. Needs Debian's python3-torch; ridge itself never does.
"""
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    sys.exit("torch_fallback_ops.py: needs PyTorch (apt-get install python3-torch)")


def values(n, salt):
    # ((7 i + 3 salt + 3) mod 17 - 8) / 8: exact in float32, in [-1, 1], none repeats within 17.
    return torch.tensor([((7 * i + 3 * salt + 3) % 17 - 8) / 8 for i in range(n)], dtype=torch.float64)


def labels(N, classes):
    return torch.tensor([(3 * n + 1) % classes for n in range(N)])


def tensor(shape, salt, scale=1.0):
    n = 1
    for s in shape:
        n *= s
    return (values(n, salt) * scale).reshape(shape).requires_grad_()


def emit(case, x, params, op):
    y = op(x, *params)
    N = y.shape[0]
    logits = y.reshape(N, -1)
    loss = F.cross_entropy(logits, labels(N, logits.shape[1]))
    loss.backward()
    rows = [("output", y.detach()), ("loss", loss.detach().reshape(1)), ("dx", x.grad)]
    rows += [("d" + name, p.grad) for name, p in zip(op.param_names, params)]
    for name, t in rows:
        print(case, name, " ".join("%.17g" % v for v in t.flatten().tolist()))


def named(f, *names):
    f.param_names = names
    return f


def main():
    print("# PyTorch %s, float64; written by bench/torch_fallback_ops.py (see its docstring)" % torch.__version__)
    print("# case quantity values...   (row-major; dx: the input's gradient; d<name>: a parameter's)")
    # class token: x (2,3,4), token (4) in front of every sequence: y (2,4,4)
    emit("class_token", tensor((2, 3, 4), 1), [tensor((4,), 2)],
         named(lambda x, t: torch.cat([t.expand(x.shape[0], 1, -1), x], dim=1), "token"))
    # average pooling 3x3, stride 2, padding 1, ceil_mode, on (2,3,6,6): y (2,3,4,4), a row and a
    # column more than floor mode; their window [5,8) hangs past the padded edge 7, so counting the
    # padding divides it by 2 rows (or columns), not 3
    for include in (True, False):
        emit("avgpool_ceil_" + ("include_pad" if include else "exclude_pad"), tensor((2, 3, 6, 6), 3), [],
             named(lambda x, inc=include: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=inc)))
    # adaptive average pooling (2,3,5,7) -> (3,2): rows [0,2) [1,4) [3,5), columns [0,4) [3,7)
    emit("adaptive_3x2", tensor((2, 3, 5, 7), 4), [], named(lambda x: F.adaptive_avg_pool2d(x, (3, 2))))
    # hardsigmoid on (2,3,4,4) scaled by 4: inputs in [-4, 4] step 0.5, the kinks at -3 and 3 included
    emit("hardsigmoid", tensor((2, 3, 4, 4), 5, 4.0), [], named(lambda x: F.hardsigmoid(x)))
    # the loss alone: logits (3,5), read through a flatten
    emit("loss", tensor((3, 5), 6, 2.0), [], named(lambda x: x))


main()
