# Warmup service image: `warmup serve` by default; `warmup worker` for engine-only replicas.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
ENV npm_config_build_from_source=true
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build:dashboard && npm prune --omit=dev && npm run build:server

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 WARMUP_DATA_DIR=/data
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
ENTRYPOINT ["node", "--max-semi-space-size=4", "bin/warmup.js"]
CMD ["serve"]
