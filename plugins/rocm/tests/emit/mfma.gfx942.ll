; tilec rocm backend: amdgcn-amd-amdhsa for gfx942
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @mfma_f16(ptr addrspace(1) %p0, ptr addrspace(1) %p1, ptr addrspace(1) %p2) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca [4 x half], align 16, addrspace(5)
  store [4 x half] zeroinitializer, ptr addrspace(5) %r0, align 16
  %r1 = alloca [4 x half], align 16, addrspace(5)
  store [4 x half] zeroinitializer, ptr addrspace(5) %r1, align 16
  %r2 = alloca [16 x float], align 16, addrspace(5)
  store [16 x float] zeroinitializer, ptr addrspace(5) %r2, align 16
  %r3 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r3
  %r4 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r4
  %r5 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r5
  %cnt0 = alloca i64, addrspace(5)
  %cnt3 = alloca i64, addrspace(5)
  %cnt6 = alloca i64, addrspace(5)
  %v0 = sext i32 16 to i64
  store i64 0, ptr addrspace(5) %cnt0
  br label %loop0
loop0:
  %v1 = load i64, ptr addrspace(5) %cnt0
  %v2 = icmp slt i64 %v1, %v0
  br i1 %v2, label %body1, label %exit2
body1:
  %v3 = trunc i64 %v1 to i32
  %v4 = mul i32 %v3, 1
  %v5 = add i32 0, %v4
  store i32 %v5, ptr addrspace(5) %r3
  %v6 = load i32, ptr addrspace(5) %r3
  %v7 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 %v6
  store float 0x0000000000000000, ptr addrspace(5) %v7
  %v8 = load i64, ptr addrspace(5) %cnt0
  %v9 = add i64 %v8, 1
  store i64 %v9, ptr addrspace(5) %cnt0
  br label %loop0, !llvm.loop !2
exit2:
  %v10 = sdiv i32 %lane, 32
  %v11 = srem i32 %lane, 32
  %v12 = icmp ne i32 %v11, 0
  %v13 = xor i32 %v11, 32
  %v14 = icmp slt i32 %v13, 0
  %v15 = and i1 %v12, %v14
  %v16 = select i1 %v15, i32 32, i32 0
  %v17 = add i32 %v11, %v16
  %v18 = mul i32 %v17, 8
  %v19 = sdiv i32 %lane, 32
  %v20 = srem i32 %lane, 32
  %v21 = icmp ne i32 %v20, 0
  %v22 = xor i32 %v20, 32
  %v23 = icmp slt i32 %v22, 0
  %v24 = and i1 %v21, %v23
  %v25 = zext i1 %v24 to i32
  %v26 = sub i32 %v19, %v25
  %v27 = mul i32 %v26, 4
  %v28 = add i32 %v18, %v27
  %v29 = sext i32 %v28 to i64
  %v30 = getelementptr inbounds half, ptr addrspace(1) %p0, i64 %v29
  %v31 = load <4 x half>, ptr addrspace(1) %v30, align 8
  %v32 = extractelement <4 x half> %v31, i32 0
  %v33 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  store half %v32, ptr addrspace(5) %v33
  %v34 = extractelement <4 x half> %v31, i32 1
  %v35 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  store half %v34, ptr addrspace(5) %v35
  %v36 = extractelement <4 x half> %v31, i32 2
  %v37 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  store half %v36, ptr addrspace(5) %v37
  %v38 = extractelement <4 x half> %v31, i32 3
  %v39 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  store half %v38, ptr addrspace(5) %v39
  %v40 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt3
  br label %loop3
loop3:
  %v41 = load i64, ptr addrspace(5) %cnt3
  %v42 = icmp slt i64 %v41, %v40
  br i1 %v42, label %body4, label %exit5
body4:
  %v43 = trunc i64 %v41 to i32
  %v44 = mul i32 %v43, 1
  %v45 = add i32 0, %v44
  store i32 %v45, ptr addrspace(5) %r4
  %v46 = sdiv i32 %lane, 32
  %v47 = srem i32 %lane, 32
  %v48 = icmp ne i32 %v47, 0
  %v49 = xor i32 %v47, 32
  %v50 = icmp slt i32 %v49, 0
  %v51 = and i1 %v48, %v50
  %v52 = zext i1 %v51 to i32
  %v53 = sub i32 %v46, %v52
  %v54 = mul i32 %v53, 4
  %v55 = load i32, ptr addrspace(5) %r4
  %v56 = add i32 %v54, %v55
  %v57 = mul i32 %v56, 32
  %v58 = sdiv i32 %lane, 32
  %v59 = srem i32 %lane, 32
  %v60 = icmp ne i32 %v59, 0
  %v61 = xor i32 %v59, 32
  %v62 = icmp slt i32 %v61, 0
  %v63 = and i1 %v60, %v62
  %v64 = select i1 %v63, i32 32, i32 0
  %v65 = add i32 %v59, %v64
  %v66 = add i32 %v57, %v65
  %v67 = sext i32 %v66 to i64
  %v68 = getelementptr inbounds half, ptr addrspace(1) %p1, i64 %v67
  %v69 = load half, ptr addrspace(1) %v68, align 2
  %v70 = load i32, ptr addrspace(5) %r4
  %v71 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 %v70
  store half %v69, ptr addrspace(5) %v71
  %v72 = load i64, ptr addrspace(5) %cnt3
  %v73 = add i64 %v72, 1
  store i64 %v73, ptr addrspace(5) %cnt3
  br label %loop3, !llvm.loop !4
exit5:
  %v74 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 0
  %v75 = load half, ptr addrspace(5) %v74
  %v76 = insertelement <4 x half> poison, half %v75, i32 0
  %v77 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 1
  %v78 = load half, ptr addrspace(5) %v77
  %v79 = insertelement <4 x half> %v76, half %v78, i32 1
  %v80 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 2
  %v81 = load half, ptr addrspace(5) %v80
  %v82 = insertelement <4 x half> %v79, half %v81, i32 2
  %v83 = getelementptr inbounds half, ptr addrspace(5) %r0, i32 3
  %v84 = load half, ptr addrspace(5) %v83
  %v85 = insertelement <4 x half> %v82, half %v84, i32 3
  %v86 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 0
  %v87 = load half, ptr addrspace(5) %v86
  %v88 = insertelement <4 x half> poison, half %v87, i32 0
  %v89 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 1
  %v90 = load half, ptr addrspace(5) %v89
  %v91 = insertelement <4 x half> %v88, half %v90, i32 1
  %v92 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 2
  %v93 = load half, ptr addrspace(5) %v92
  %v94 = insertelement <4 x half> %v91, half %v93, i32 2
  %v95 = getelementptr inbounds half, ptr addrspace(5) %r1, i32 3
  %v96 = load half, ptr addrspace(5) %v95
  %v97 = insertelement <4 x half> %v94, half %v96, i32 3
  %v98 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 0
  %v99 = load float, ptr addrspace(5) %v98
  %v100 = insertelement <16 x float> poison, float %v99, i32 0
  %v101 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 1
  %v102 = load float, ptr addrspace(5) %v101
  %v103 = insertelement <16 x float> %v100, float %v102, i32 1
  %v104 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 2
  %v105 = load float, ptr addrspace(5) %v104
  %v106 = insertelement <16 x float> %v103, float %v105, i32 2
  %v107 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 3
  %v108 = load float, ptr addrspace(5) %v107
  %v109 = insertelement <16 x float> %v106, float %v108, i32 3
  %v110 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 4
  %v111 = load float, ptr addrspace(5) %v110
  %v112 = insertelement <16 x float> %v109, float %v111, i32 4
  %v113 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 5
  %v114 = load float, ptr addrspace(5) %v113
  %v115 = insertelement <16 x float> %v112, float %v114, i32 5
  %v116 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 6
  %v117 = load float, ptr addrspace(5) %v116
  %v118 = insertelement <16 x float> %v115, float %v117, i32 6
  %v119 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 7
  %v120 = load float, ptr addrspace(5) %v119
  %v121 = insertelement <16 x float> %v118, float %v120, i32 7
  %v122 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 8
  %v123 = load float, ptr addrspace(5) %v122
  %v124 = insertelement <16 x float> %v121, float %v123, i32 8
  %v125 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 9
  %v126 = load float, ptr addrspace(5) %v125
  %v127 = insertelement <16 x float> %v124, float %v126, i32 9
  %v128 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 10
  %v129 = load float, ptr addrspace(5) %v128
  %v130 = insertelement <16 x float> %v127, float %v129, i32 10
  %v131 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 11
  %v132 = load float, ptr addrspace(5) %v131
  %v133 = insertelement <16 x float> %v130, float %v132, i32 11
  %v134 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 12
  %v135 = load float, ptr addrspace(5) %v134
  %v136 = insertelement <16 x float> %v133, float %v135, i32 12
  %v137 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 13
  %v138 = load float, ptr addrspace(5) %v137
  %v139 = insertelement <16 x float> %v136, float %v138, i32 13
  %v140 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 14
  %v141 = load float, ptr addrspace(5) %v140
  %v142 = insertelement <16 x float> %v139, float %v141, i32 14
  %v143 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 15
  %v144 = load float, ptr addrspace(5) %v143
  %v145 = insertelement <16 x float> %v142, float %v144, i32 15
  %v146 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %v85, <4 x half> %v97, <16 x float> %v145, i32 0, i32 0, i32 0)
  %v147 = extractelement <16 x float> %v146, i32 0
  %v148 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 0
  store float %v147, ptr addrspace(5) %v148
  %v149 = extractelement <16 x float> %v146, i32 1
  %v150 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 1
  store float %v149, ptr addrspace(5) %v150
  %v151 = extractelement <16 x float> %v146, i32 2
  %v152 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 2
  store float %v151, ptr addrspace(5) %v152
  %v153 = extractelement <16 x float> %v146, i32 3
  %v154 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 3
  store float %v153, ptr addrspace(5) %v154
  %v155 = extractelement <16 x float> %v146, i32 4
  %v156 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 4
  store float %v155, ptr addrspace(5) %v156
  %v157 = extractelement <16 x float> %v146, i32 5
  %v158 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 5
  store float %v157, ptr addrspace(5) %v158
  %v159 = extractelement <16 x float> %v146, i32 6
  %v160 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 6
  store float %v159, ptr addrspace(5) %v160
  %v161 = extractelement <16 x float> %v146, i32 7
  %v162 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 7
  store float %v161, ptr addrspace(5) %v162
  %v163 = extractelement <16 x float> %v146, i32 8
  %v164 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 8
  store float %v163, ptr addrspace(5) %v164
  %v165 = extractelement <16 x float> %v146, i32 9
  %v166 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 9
  store float %v165, ptr addrspace(5) %v166
  %v167 = extractelement <16 x float> %v146, i32 10
  %v168 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 10
  store float %v167, ptr addrspace(5) %v168
  %v169 = extractelement <16 x float> %v146, i32 11
  %v170 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 11
  store float %v169, ptr addrspace(5) %v170
  %v171 = extractelement <16 x float> %v146, i32 12
  %v172 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 12
  store float %v171, ptr addrspace(5) %v172
  %v173 = extractelement <16 x float> %v146, i32 13
  %v174 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 13
  store float %v173, ptr addrspace(5) %v174
  %v175 = extractelement <16 x float> %v146, i32 14
  %v176 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 14
  store float %v175, ptr addrspace(5) %v176
  %v177 = extractelement <16 x float> %v146, i32 15
  %v178 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 15
  store float %v177, ptr addrspace(5) %v178
  %v179 = sext i32 16 to i64
  store i64 0, ptr addrspace(5) %cnt6
  br label %loop6
loop6:
  %v180 = load i64, ptr addrspace(5) %cnt6
  %v181 = icmp slt i64 %v180, %v179
  br i1 %v181, label %body7, label %exit8
body7:
  %v182 = trunc i64 %v180 to i32
  %v183 = mul i32 %v182, 1
  %v184 = add i32 0, %v183
  store i32 %v184, ptr addrspace(5) %r5
  %v185 = load i32, ptr addrspace(5) %r5
  %v186 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 %v185
  %v187 = load float, ptr addrspace(5) %v186
  %v188 = load i32, ptr addrspace(5) %r5
  %v189 = sdiv i32 %v188, 4
  %v190 = srem i32 %v188, 4
  %v191 = icmp ne i32 %v190, 0
  %v192 = xor i32 %v190, 4
  %v193 = icmp slt i32 %v192, 0
  %v194 = and i1 %v191, %v193
  %v195 = zext i1 %v194 to i32
  %v196 = sub i32 %v189, %v195
  %v197 = mul i32 %v196, 8
  %v198 = sdiv i32 %lane, 32
  %v199 = srem i32 %lane, 32
  %v200 = icmp ne i32 %v199, 0
  %v201 = xor i32 %v199, 32
  %v202 = icmp slt i32 %v201, 0
  %v203 = and i1 %v200, %v202
  %v204 = zext i1 %v203 to i32
  %v205 = sub i32 %v198, %v204
  %v206 = mul i32 %v205, 4
  %v207 = add i32 %v197, %v206
  %v208 = load i32, ptr addrspace(5) %r5
  %v209 = sdiv i32 %v208, 4
  %v210 = srem i32 %v208, 4
  %v211 = icmp ne i32 %v210, 0
  %v212 = xor i32 %v210, 4
  %v213 = icmp slt i32 %v212, 0
  %v214 = and i1 %v211, %v213
  %v215 = select i1 %v214, i32 4, i32 0
  %v216 = add i32 %v210, %v215
  %v217 = add i32 %v207, %v216
  %v218 = mul i32 %v217, 32
  %v219 = sdiv i32 %lane, 32
  %v220 = srem i32 %lane, 32
  %v221 = icmp ne i32 %v220, 0
  %v222 = xor i32 %v220, 32
  %v223 = icmp slt i32 %v222, 0
  %v224 = and i1 %v221, %v223
  %v225 = select i1 %v224, i32 32, i32 0
  %v226 = add i32 %v220, %v225
  %v227 = add i32 %v218, %v226
  %v228 = sext i32 %v227 to i64
  %v229 = getelementptr inbounds float, ptr addrspace(1) %p2, i64 %v228
  store float %v187, ptr addrspace(1) %v229, align 4
  %v230 = load i64, ptr addrspace(5) %cnt6
  %v231 = add i64 %v230, 1
  store i64 %v231, ptr addrspace(5) %cnt6
  br label %loop6, !llvm.loop !6
exit8:
  ret void
}

define amdgpu_kernel void @mfma_bf16(ptr addrspace(1) %p0, ptr addrspace(1) %p1, ptr addrspace(1) %p2) #1 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca [4 x i16], align 16, addrspace(5)
  store [4 x i16] zeroinitializer, ptr addrspace(5) %r0, align 16
  %r1 = alloca [4 x i16], align 16, addrspace(5)
  store [4 x i16] zeroinitializer, ptr addrspace(5) %r1, align 16
  %r2 = alloca [4 x float], align 16, addrspace(5)
  store [4 x float] zeroinitializer, ptr addrspace(5) %r2, align 16
  %r3 = alloca [4 x float], align 16, addrspace(5)
  store [4 x float] zeroinitializer, ptr addrspace(5) %r3, align 16
  %r4 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r4
  %r5 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r5
  %cnt0 = alloca i64, addrspace(5)
  %cnt3 = alloca i64, addrspace(5)
  %v0 = sdiv i32 %lane, 16
  %v1 = srem i32 %lane, 16
  %v2 = icmp ne i32 %v1, 0
  %v3 = xor i32 %v1, 16
  %v4 = icmp slt i32 %v3, 0
  %v5 = and i1 %v2, %v4
  %v6 = select i1 %v5, i32 16, i32 0
  %v7 = add i32 %v1, %v6
  %v8 = mul i32 %v7, 16
  %v9 = sdiv i32 %lane, 16
  %v10 = srem i32 %lane, 16
  %v11 = icmp ne i32 %v10, 0
  %v12 = xor i32 %v10, 16
  %v13 = icmp slt i32 %v12, 0
  %v14 = and i1 %v11, %v13
  %v15 = zext i1 %v14 to i32
  %v16 = sub i32 %v9, %v15
  %v17 = mul i32 %v16, 4
  %v18 = add i32 %v8, %v17
  %v19 = sext i32 %v18 to i64
  %v20 = getelementptr inbounds i16, ptr addrspace(1) %p0, i64 %v19
  %v21 = load <4 x i16>, ptr addrspace(1) %v20, align 8
  %v22 = extractelement <4 x i16> %v21, i32 0
  %v23 = getelementptr inbounds i16, ptr addrspace(5) %r0, i32 0
  store i16 %v22, ptr addrspace(5) %v23
  %v24 = extractelement <4 x i16> %v21, i32 1
  %v25 = getelementptr inbounds i16, ptr addrspace(5) %r0, i32 1
  store i16 %v24, ptr addrspace(5) %v25
  %v26 = extractelement <4 x i16> %v21, i32 2
  %v27 = getelementptr inbounds i16, ptr addrspace(5) %r0, i32 2
  store i16 %v26, ptr addrspace(5) %v27
  %v28 = extractelement <4 x i16> %v21, i32 3
  %v29 = getelementptr inbounds i16, ptr addrspace(5) %r0, i32 3
  store i16 %v28, ptr addrspace(5) %v29
  %v30 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt0
  br label %loop0
loop0:
  %v31 = load i64, ptr addrspace(5) %cnt0
  %v32 = icmp slt i64 %v31, %v30
  br i1 %v32, label %body1, label %exit2
body1:
  %v33 = trunc i64 %v31 to i32
  %v34 = mul i32 %v33, 1
  %v35 = add i32 0, %v34
  store i32 %v35, ptr addrspace(5) %r4
  %v36 = sdiv i32 %lane, 16
  %v37 = srem i32 %lane, 16
  %v38 = icmp ne i32 %v37, 0
  %v39 = xor i32 %v37, 16
  %v40 = icmp slt i32 %v39, 0
  %v41 = and i1 %v38, %v40
  %v42 = zext i1 %v41 to i32
  %v43 = sub i32 %v36, %v42
  %v44 = mul i32 %v43, 4
  %v45 = load i32, ptr addrspace(5) %r4
  %v46 = add i32 %v44, %v45
  %v47 = mul i32 %v46, 16
  %v48 = sdiv i32 %lane, 16
  %v49 = srem i32 %lane, 16
  %v50 = icmp ne i32 %v49, 0
  %v51 = xor i32 %v49, 16
  %v52 = icmp slt i32 %v51, 0
  %v53 = and i1 %v50, %v52
  %v54 = select i1 %v53, i32 16, i32 0
  %v55 = add i32 %v49, %v54
  %v56 = add i32 %v47, %v55
  %v57 = sext i32 %v56 to i64
  %v58 = getelementptr inbounds i16, ptr addrspace(1) %p1, i64 %v57
  %v59 = load i16, ptr addrspace(1) %v58, align 2
  %v60 = load i32, ptr addrspace(5) %r4
  %v61 = getelementptr inbounds i16, ptr addrspace(5) %r1, i32 %v60
  store i16 %v59, ptr addrspace(5) %v61
  %v62 = load i32, ptr addrspace(5) %r4
  %v63 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 %v62
  store float 0x0000000000000000, ptr addrspace(5) %v63
  %v64 = load i64, ptr addrspace(5) %cnt0
  %v65 = add i64 %v64, 1
  store i64 %v65, ptr addrspace(5) %cnt0
  br label %loop0, !llvm.loop !8
exit2:
  %v66 = getelementptr inbounds i16, ptr addrspace(5) %r0, i32 0
  %v67 = load i16, ptr addrspace(5) %v66
  %v68 = insertelement <4 x i16> poison, i16 %v67, i32 0
  %v69 = getelementptr inbounds i16, ptr addrspace(5) %r0, i32 1
  %v70 = load i16, ptr addrspace(5) %v69
  %v71 = insertelement <4 x i16> %v68, i16 %v70, i32 1
  %v72 = getelementptr inbounds i16, ptr addrspace(5) %r0, i32 2
  %v73 = load i16, ptr addrspace(5) %v72
  %v74 = insertelement <4 x i16> %v71, i16 %v73, i32 2
  %v75 = getelementptr inbounds i16, ptr addrspace(5) %r0, i32 3
  %v76 = load i16, ptr addrspace(5) %v75
  %v77 = insertelement <4 x i16> %v74, i16 %v76, i32 3
  %v78 = getelementptr inbounds i16, ptr addrspace(5) %r1, i32 0
  %v79 = load i16, ptr addrspace(5) %v78
  %v80 = insertelement <4 x i16> poison, i16 %v79, i32 0
  %v81 = getelementptr inbounds i16, ptr addrspace(5) %r1, i32 1
  %v82 = load i16, ptr addrspace(5) %v81
  %v83 = insertelement <4 x i16> %v80, i16 %v82, i32 1
  %v84 = getelementptr inbounds i16, ptr addrspace(5) %r1, i32 2
  %v85 = load i16, ptr addrspace(5) %v84
  %v86 = insertelement <4 x i16> %v83, i16 %v85, i32 2
  %v87 = getelementptr inbounds i16, ptr addrspace(5) %r1, i32 3
  %v88 = load i16, ptr addrspace(5) %v87
  %v89 = insertelement <4 x i16> %v86, i16 %v88, i32 3
  %v90 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 0
  %v91 = load float, ptr addrspace(5) %v90
  %v92 = insertelement <4 x float> poison, float %v91, i32 0
  %v93 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 1
  %v94 = load float, ptr addrspace(5) %v93
  %v95 = insertelement <4 x float> %v92, float %v94, i32 1
  %v96 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 2
  %v97 = load float, ptr addrspace(5) %v96
  %v98 = insertelement <4 x float> %v95, float %v97, i32 2
  %v99 = getelementptr inbounds float, ptr addrspace(5) %r2, i32 3
  %v100 = load float, ptr addrspace(5) %v99
  %v101 = insertelement <4 x float> %v98, float %v100, i32 3
  %v102 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> %v77, <4 x i16> %v89, <4 x float> %v101, i32 0, i32 0, i32 0)
  %v103 = extractelement <4 x float> %v102, i32 0
  %v104 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 0
  store float %v103, ptr addrspace(5) %v104
  %v105 = extractelement <4 x float> %v102, i32 1
  %v106 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 1
  store float %v105, ptr addrspace(5) %v106
  %v107 = extractelement <4 x float> %v102, i32 2
  %v108 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 2
  store float %v107, ptr addrspace(5) %v108
  %v109 = extractelement <4 x float> %v102, i32 3
  %v110 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 3
  store float %v109, ptr addrspace(5) %v110
  %v111 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt3
  br label %loop3
loop3:
  %v112 = load i64, ptr addrspace(5) %cnt3
  %v113 = icmp slt i64 %v112, %v111
  br i1 %v113, label %body4, label %exit5
body4:
  %v114 = trunc i64 %v112 to i32
  %v115 = mul i32 %v114, 1
  %v116 = add i32 0, %v115
  store i32 %v116, ptr addrspace(5) %r5
  %v117 = load i32, ptr addrspace(5) %r5
  %v118 = getelementptr inbounds float, ptr addrspace(5) %r3, i32 %v117
  %v119 = load float, ptr addrspace(5) %v118
  %v120 = sdiv i32 %lane, 16
  %v121 = srem i32 %lane, 16
  %v122 = icmp ne i32 %v121, 0
  %v123 = xor i32 %v121, 16
  %v124 = icmp slt i32 %v123, 0
  %v125 = and i1 %v122, %v124
  %v126 = zext i1 %v125 to i32
  %v127 = sub i32 %v120, %v126
  %v128 = mul i32 %v127, 4
  %v129 = load i32, ptr addrspace(5) %r5
  %v130 = add i32 %v128, %v129
  %v131 = mul i32 %v130, 16
  %v132 = sdiv i32 %lane, 16
  %v133 = srem i32 %lane, 16
  %v134 = icmp ne i32 %v133, 0
  %v135 = xor i32 %v133, 16
  %v136 = icmp slt i32 %v135, 0
  %v137 = and i1 %v134, %v136
  %v138 = select i1 %v137, i32 16, i32 0
  %v139 = add i32 %v133, %v138
  %v140 = add i32 %v131, %v139
  %v141 = sext i32 %v140 to i64
  %v142 = getelementptr inbounds float, ptr addrspace(1) %p2, i64 %v141
  store float %v119, ptr addrspace(1) %v142, align 4
  %v143 = load i64, ptr addrspace(5) %cnt3
  %v144 = add i64 %v143, 1
  store i64 %v144, ptr addrspace(5) %cnt3
  br label %loop3, !llvm.loop !10
exit5:
  ret void
}

declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32 immarg, i32 immarg, i32 immarg)
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half>, <4 x half>, <16 x float>, i32 immarg, i32 immarg, i32 immarg)
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }
attributes #1 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
!1 = !{!"llvm.loop.unroll.full"}
!2 = distinct !{!2, !1}
!3 = !{!"llvm.loop.unroll.full"}
!4 = distinct !{!4, !3}
!5 = !{!"llvm.loop.unroll.full"}
!6 = distinct !{!6, !5}
!7 = !{!"llvm.loop.unroll.full"}
!8 = distinct !{!8, !7}
!9 = !{!"llvm.loop.unroll.full"}
!10 = distinct !{!10, !9}
