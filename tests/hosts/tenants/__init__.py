"""A multi-tenant host, as products have them: plain ``DefaultRouter`` s ``include()`` d
under ``<tenant>/projects/<project>/``, whose viewsets read both kwargs (another tenant's
rows are not found), a viewset named after its parent (``order-payments``), models whose
English plurals are not ``+s`` (``Property``, ``Medium``), and custom actions: one that
takes no body (``mark_paid``) and one on the list route (``unpaid``)."""

# The product's API middleware, as its MIDDLEWARE lists it after Django's own (the tests
# install it; tests/settings_tenants.py serves the host with it).
API_MIDDLEWARE = [
    "tests.hosts.tenants.middleware.TenantMiddleware",
    "tests.hosts.tenants.middleware.ProjectGateMiddleware",
]
