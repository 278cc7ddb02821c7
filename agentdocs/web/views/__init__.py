"""The browser pages, one module per area: projects, documents, policy, memory block,
binding records."""
