"""A large product, generated: fifty kinds of record, each served by four viewsets (its
own records, an archive with a restore action, the team's records that only staff change,
and shared drafts), 200 viewsets and 1,050 tools in all, with the filters, search,
ordering and pagination a real product's list views have. What a client loads of its
``tools/list`` must stay small however large the product is (see mcp_endpoint.toolsets)."""
