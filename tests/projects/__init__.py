"""Small host projects with settings of their own, for shapes that cannot share the suite's
settings (a custom user model, say, which must be the only one from the first migration).

Unlike the apps in ``tests/hosts/``, which the suite's settings install together, each
package here is a whole project: a ``settings`` module, a URL conf and the models the shape
needs, served by ``tests/live_server.py`` with ``DJANGO_SETTINGS_MODULE`` pointing at it.
"""
