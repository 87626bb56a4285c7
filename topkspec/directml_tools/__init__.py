"""The tools that drive DirectML campaigns, above the targets they run (tests/test_layout.py
keeps the order):

    setup/       `topkspec directml setup` and `info`: install, and check the stack on known TopKs
    bundle/      `topkspec directml bundle` and `bundle-check`: the portable bundle for a GPU machine
    analyses/    `topkspec directml compare`, `layers` and `replay`: documents, layers and corpus
                 against DirectML

They may import the targets, the corpus and the known lists, and DirectML's stack below the
targets (topkspec.directml); nothing below them imports them.
"""
