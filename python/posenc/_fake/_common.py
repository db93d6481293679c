"""The registration of posenc's fake kernels (register) and the device check they run first."""
import torch

_register = getattr(torch.library, "register_fake", None)


def _tensors_of(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for t in value if isinstance(t, torch.Tensor)]
    return []


def check_devices(name, args, kwargs):
    """Every tensor argument of posenc::<name> on one device, else ValueError naming the argument and
    both devices. The fake kernel is what runs when one argument is on the meta device beside CPU
    tensors (Meta dispatches first), so without this check it would hand back an uninitialised
    tensor instead of failing as the CPU kernel would."""
    names = [a.name for a in getattr(torch.ops.posenc, name).default._schema.arguments]
    first = None
    for arg_name, value in list(zip(names, args)) + list(kwargs.items()):
        for t in _tensors_of(value):
            if first is None:
                first = (arg_name, t.device)
            elif t.device != first[1]:
                raise ValueError("posenc: %s: %s: expected the device of %s (%s), got %s"
                                 % (name, arg_name, first[0], first[1], t.device))


def register(name):
    """Register the decorated function as posenc::<name>'s fake kernel, behind check_devices."""
    def deco(fn):
        def checked(*args, **kwargs):
            check_devices(name, args, kwargs)
            return fn(*args, **kwargs)

        if _register is not None:
            _register("posenc::" + name)(checked)
        return fn

    return deco
