# The playground as a container: the same app as `python app.py`, served on port 7860 by a
# non-root user (as Hugging Face Docker Spaces expect).
FROM python:3.11-slim

RUN useradd --create-home --uid 1000 user
USER user
ENV HOME=/home/user \
    PATH=/home/user/.local/bin:$PATH \
    PROBE_HOME=/home/user/.probe \
    GRADIO_SERVER_NAME=0.0.0.0 \
    GRADIO_SERVER_PORT=7860 \
    PYTHONUNBUFFERED=1
WORKDIR /home/user/app

# Dependencies first: the layer is reused when only the code changes.
COPY --chown=user requirements.txt .
RUN pip install --no-cache-dir --user -r requirements.txt

COPY --chown=user app.py ./
COPY --chown=user ui ./ui
COPY --chown=user probes ./probes
COPY --chown=user models ./models
COPY --chown=user assets ./assets

EXPOSE 7860
CMD ["python", "app.py"]
