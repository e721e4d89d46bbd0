"""The HTTP routes beside GraphQL: health, exports, the explorer page."""
