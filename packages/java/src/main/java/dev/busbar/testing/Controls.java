// The broker's controls over its admin port: entities created through the Service Bus
// administration API (ATOM/XML) and Busbar's test controls (/$busbar/…), each request signed
// with a SAS token for the namespace key.
package dev.busbar.testing;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.stream.Collectors;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

final class Controls {
    static final String KEY_NAME = "RootManageSharedAccessKey";
    static final String KEY = "SAS_KEY_VALUE";
    private static final String NAMESPACE =
            "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect";

    private final String endpoint;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    Controls(String endpoint) {
        this.endpoint = endpoint;
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    static String entityPath(String entity) {
        return java.util.Arrays.stream(entity.split("/", -1))
                .map(segment -> encode(segment).replace("+", "%20"))
                .collect(Collectors.joining("/"));
    }

    private static String token(String url) {
        String audience = encode(url);
        long expiry = System.currentTimeMillis() / 1000 + 3600;
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(KEY.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] digest = mac.doFinal((audience + "\n" + expiry).getBytes(StandardCharsets.UTF_8));
            String signature = encode(Base64.getEncoder().encodeToString(digest));
            return "SharedAccessSignature sr=" + audience + "&sig=" + signature + "&se=" + expiry
                    + "&skn=" + KEY_NAME;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
        }
    }

    /** Sends one request; returns the answer's body, or throws unless it is 2xx. */
    String request(String method, String path, String body, String contentType) {
        String url = endpoint + path;
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", token(url));
        if (body == null) {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            request.header("Content-Type", contentType)
                    .method(method, HttpRequest.BodyPublishers.ofString(body));
        }
        try {
            HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() / 100 != 2) {
                throw new BusbarException(method + " " + path + ": " + answer.statusCode() + " " + answer.body());
            }
            return answer.body();
        } catch (IOException e) {
            throw new BusbarException(method + " " + path + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BusbarException(method + " " + path + ": interrupted", e);
        }
    }

    String post(String path, String json) {
        return request("POST", path, json, "application/json");
    }

    void putEntity(String path, String kind, Map<String, ?> properties) {
        StringBuilder elements = new StringBuilder();
        properties.forEach((name, value) -> elements.append('<').append(name).append('>')
                .append(escape(String.valueOf(value))).append("</").append(name).append('>'));
        String body = "<entry xmlns=\"http://www.w3.org/2005/Atom\"><content type=\"application/xml\">"
                + "<" + kind + " xmlns=\"" + NAMESPACE + "\">" + elements + "</" + kind + ">"
                + "</content></entry>";
        request("PUT", "/" + entityPath(path), body, "application/atom+xml");
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
