{{/*
Names. The fullname is the release name when it already contains the chart name (the usual
`helm install kubex-automation-engine ...`), otherwise "<release>-<chart>"; 63 characters at most.
*/}}
{{- define "kubex.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubex.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kubex.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubex.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubex.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kubex.labels" -}}
helm.sh/chart: {{ include "kubex.chart" . }}
{{ include "kubex.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: kubex
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "kubex.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kubex.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "kubex.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* `kubex gpu-exporter` (TEL-5): its name, labels and image (the engine's unless gpuExporter.image says). */}}
{{- define "kubex.gpuExporterName" -}}
{{- printf "%s-gpu-exporter" (include "kubex.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubex.gpuExporterSelectorLabels" -}}
{{ include "kubex.selectorLabels" . }}
app.kubernetes.io/component: gpu-exporter
{{- end -}}

{{- define "kubex.gpuExporterLabels" -}}
{{ include "kubex.labels" . }}
app.kubernetes.io/component: gpu-exporter
{{- end -}}

{{- define "kubex.gpuExporterImage" -}}
{{- $img := .Values.gpuExporter.image -}}
{{- printf "%s:%s" (default .Values.image.repository $img.repository) (default (default .Chart.AppVersion .Values.image.tag) $img.tag) -}}
{{- end -}}

{{/* The webhook Service (HLM-1) and the DNS names its serving certificate must carry. */}}
{{- define "kubex.webhookServiceName" -}}
{{- printf "%s-webhook-service" (include "kubex.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubex.webhookCertSecretName" -}}
{{- printf "%s-webhook-server-cert" (include "kubex.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubex.webhookCertificateName" -}}
{{- printf "%s-serving-cert" (include "kubex.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubex.webhookDNSNames" -}}
{{- $svc := include "kubex.webhookServiceName" . -}}
{{- $ns := .Release.Namespace -}}
{{- list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) | toJson -}}
{{- end -}}

{{/*
Webhook configuration and webhook names (ADM-1). The engine's own registration (--register-webhooks) uses the
same names with the default prefixes: zzz-/000-kubex-mutating-webhook-configuration,
zzz-/000-mpod-rightsizing-recommendations.kubex.ai and kubex-validating-webhook-configuration.
*/}}
{{- define "kubex.lateMutatingConfigName" -}}
{{- printf "%skubex-mutating-webhook-configuration" .Values.webhook.podMutation.namePrefix -}}
{{- end -}}
{{- define "kubex.earlyMutatingConfigName" -}}
{{- printf "%skubex-mutating-webhook-configuration" .Values.webhook.podMutation.additionalWebhook.namePrefix -}}
{{- end -}}
{{- define "kubex.validatingConfigName" -}}
kubex-validating-webhook-configuration
{{- end -}}

{{/*
Checks that the schema cannot express. Included by every template that depends on them, so `helm template`,
`helm install` and `helm upgrade` all stop with the message.
*/}}
{{- define "kubex.validateValues" -}}
{{- $late := .Values.webhook.podMutation.namePrefix -}}
{{- $early := .Values.webhook.podMutation.additionalWebhook.namePrefix -}}
{{- if eq $late $early -}}
{{- fail (printf "webhook.podMutation.additionalWebhook.namePrefix (%q) must differ from webhook.podMutation.namePrefix (%q): the early and late MutatingWebhookConfigurations would have the same name, and the early pass must sort before KAI's webhook while the late pass sorts after it (defaults: \"000-\" and \"zzz-\")" $early $late) -}}
{{- end -}}
{{- if and .Values.podDisruptionBudget.enabled (not (kindIs "invalid" .Values.podDisruptionBudget.minAvailable)) (not (kindIs "invalid" .Values.podDisruptionBudget.maxUnavailable)) -}}
{{- fail "podDisruptionBudget: set only one of minAvailable and maxUnavailable (set the other to null)" -}}
{{- end -}}
{{- with .Values.gpuExporter -}}
{{- if and .enabled .driver.runtimeClassName .driver.hostDriverRoot -}}
{{- fail (printf "gpuExporter.driver: set runtimeClassName (%q: the NVIDIA container runtime injects libnvidia-ml) or hostDriverRoot (%q: the driver's files mounted from the host), not both; to use hostDriverRoot set gpuExporter.driver.runtimeClassName=\"\" (TEL-5)" .driver.runtimeClassName .driver.hostDriverRoot) -}}
{{- end -}}
{{- end -}}
{{- with .Values.globalConfiguration.proactive.recommendationsConfigMap -}}
{{- if or (not .namespace) (not .name) -}}
{{- fail "globalConfiguration.proactive.recommendationsConfigMap: both namespace and name are required when it is set (PRO-6)" -}}
{{- end -}}
{{- end -}}
{{- end -}}
