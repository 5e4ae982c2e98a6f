"""The pixel comparison of a stored PNG with a received one: pixelmatch's algorithm,
vectorised (:mod:`.pixeldiff`, :mod:`.antialias`), on the union canvas when the sizes
differ (:mod:`.unioncanvas`)."""
