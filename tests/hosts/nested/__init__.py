"""A host with nested routes, as products have them: projects that belong to their owner,
tasks under a project and comments under a task (two levels deep). The tasks are routed
flat and nested by drf-nested-routers' routers; the comments by hand, with ``path()`` and
``re_path()`` under an ``include()`` prefix. A child refuses (404) a parent the caller may
not see."""
