# The citegraph API (GraphQL + explorer). Used by docker-compose.yml with Neo4j.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /app
COPY pyproject.toml README.md* ./
COPY graph ./graph
COPY api ./api
COPY citegraph ./citegraph
COPY seeds ./seeds
RUN pip install . && useradd --create-home citegraph && mkdir -p /data/citegraph \
    && chown citegraph /data/citegraph
USER citegraph

ENV CITEGRAPH_HOST=0.0.0.0 CITEGRAPH_PORT=8000 CITEGRAPH_SEEDS_DIR=/app/seeds
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --retries=6 \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz')"
CMD ["sh", "-c", "exec citegraph serve --host \"$CITEGRAPH_HOST\" --port \"$CITEGRAPH_PORT\""]
