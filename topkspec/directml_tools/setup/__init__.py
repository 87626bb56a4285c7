"""`topkspec directml setup` and `topkspec directml info`: installing the stack (Wine packages,
DirectML.dll, the Windows onnxruntime.dll, or a bundle's stack), each step's log, the last step
that runs TopKs whose answers are known through the targets, and what setup chose. Sits above
the targets it checks: it imports them and the stack's rooms below them."""
