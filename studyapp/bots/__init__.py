"""Bot participants (pure Python, no Django): the simulated observers (``observers``) and the runner that takes them
through a study over HTTP and websockets (``runner``)."""
