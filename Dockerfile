# The gateway as an image: build in one stage, run the compiled output as a non-root user in the next.
# Data (the LMDB store, or in distributed mode its local replica) lives in the /data volume.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY core ./core
COPY plugins ./plugins
COPY cli ./cli
COPY bench ./bench
COPY test ./test
COPY config ./config
COPY console ./console
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production GATEWAY_DATA_DIR=/data GATEWAY_HOST=0.0.0.0
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/config ./config
COPY package.json ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:8787/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node is PID 1 here and handles SIGTERM itself: the gateway drains in-flight requests, then exits.
CMD ["node", "dist/cli/main.js", "start"]
