"""The notebook API's functions and result objects, behind ``import connectx_forge as cf`` (connectx_forge's
``__init__`` imports them on first use): ``functions`` and ``league`` call the commands' own code, ``results`` and
``league_results`` hold what they return, ``html`` draws it in a notebook."""
