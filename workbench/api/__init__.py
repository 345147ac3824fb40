"""The Python front door: the twins of the magics (``workbench.jaxpr``, ``hlo``, ``bench``,
``sharding``, ``mesh_explorer``), one module each; ``workbench/__init__`` re-exports them."""
