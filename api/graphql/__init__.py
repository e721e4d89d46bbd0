"""The GraphQL API: schema, types, loaders, limits, error codes, and its HTTP router."""
