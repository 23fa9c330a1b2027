"""The bundler (``connectx_bundler``): an agent project, a ``.py`` file or a registered agent into the one file
Kaggle accepts, with its modules, data files and C libraries embedded and a manifest beside it (``cxforge build``).

In a checkout this folder, ``build/``, shadows PyPA's ``build`` for ``python -m build`` run from the checkout's root
(``-m`` puts the working folder first on the path): use PyPA's own command there, ``pyproject-build``, or
``pip wheel``.  Installed, it is ``connectx_forge/build`` and shadows nothing.
"""
